package cli

import (
	"context"
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
)

func newBackupsCommand(g *globals) *cobra.Command {
	return jsonCommand("backups [agent]", "List the pre-condense backups of one agent or all, newest first", cobra.MaximumNArgs(1),
		func(ctx context.Context, args []string, asJSON bool) error {
			agent := ""
			if len(args) == 1 {
				// An empty argument is not "all agents".
				if err := home.ValidateAgentID(args[0]); err != nil {
					return err
				}
				agent = args[0]
			}
			return runBackups(ctx, g, agent, asJSON)
		})
}

func runBackups(ctx context.Context, g *globals, agent string, asJSON bool) error {
	a, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer a.Close()
	bs, err := a.Backups(ctx, app.BackupsRequest{Agent: agent, Known: true})
	if err != nil {
		return fmt.Errorf("backups: %w", err)
	}
	if asJSON {
		return writeJSON(g.stdout, bs)
	}
	if len(bs) == 0 {
		if agent == "" {
			fmt.Fprintln(g.stdout, "no backups")
		} else {
			fmt.Fprintf(g.stdout, "no backups of %s\n", agent)
		}
		return nil
	}
	for _, b := range bs {
		fmt.Fprintf(g.stdout, "%-20s %-22s %10s  %s\n", b.Agent, b.Name, humanize.IBytes(uint64(b.Size)), b.Time.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return nil
}
