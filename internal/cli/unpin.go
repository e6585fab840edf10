package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

func newUnpinCommand(g *globals) *cobra.Command {
	return takesText(jsonCommand(`unpin <agent> "fact"`, "Take a fact out of an agent's pinned region (archived with the day it stopped being true)", cobra.ExactArgs(2),
		func(ctx context.Context, args []string, asJSON bool) error {
			a, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer a.Close()
			res, err := a.Unpin(ctx, app.UnpinRequest{Agent: args[0], Fact: args[1]})
			if err != nil {
				return err
			}
			warnMineFailed(g, "change", a.Home().Abs(res.Source), res.MineError)
			if asJSON {
				return writeJSON(g.stdout, res)
			}
			fmt.Fprintf(g.stdout, "unpinned %q for %s (archived in %s, backup %s)\n", res.Fact, res.Agent, res.Archive, res.Backup)
			return nil
		}))
}
