package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/home"
)

func newInitCommand(g *globals) *cobra.Command {
	return jsonCommand("init", "Create the home layout (hive/agents, hive/archive, hive/backups, palace)", cobra.NoArgs,
		func(ctx context.Context, _ []string, asJSON bool) error { return runInit(ctx, g, asJSON) })
}

func runInit(ctx context.Context, g *globals, asJSON bool) error {
	h, err := home.Resolve(g.home)
	if err != nil {
		return err
	}
	existed := h.Exists()
	a, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer a.Close()
	if asJSON {
		return writeJSON(g.stdout, map[string]any{"home": h.Root, "created": !existed, "embedder": a.EmbedderInfo()})
	}
	if existed {
		fmt.Fprintf(g.stdout, "hivemem home already initialised at %s\n", h.Root)
	} else {
		fmt.Fprintf(g.stdout, "initialised hivemem home at %s\n", h.Root)
	}
	if a.EmbedderInfo().Note != "" {
		fmt.Fprintf(g.stdout, "note: %s\n", a.EmbedderInfo().Note)
	}
	return nil
}
