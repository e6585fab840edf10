package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// newMempalaceInitCommand is MemPalace's `init <dir> --yes --no-llm`: it
// creates the home (and its palace) and never prompts. <dir> is the tree
// MemPalace would set up; hivemem needs nothing from it, so it is only
// checked to be a directory. `mine` creates a missing home too, as
// MemPalace's does, so a harness need not run init at all.
func newMempalaceInitCommand(g *globals) *cobra.Command {
	var yes, noLLM, asJSON bool
	cmd := leafCommand("init [dir]", "Create the palace (never prompts; --yes and --no-llm are accepted for MemPalace's command line)", cobra.MaximumNArgs(1),
		func(ctx context.Context, args []string) error {
			if len(args) == 1 {
				st, err := os.Stat(args[0])
				if err != nil {
					return fmt.Errorf("init %s: %w", args[0], err)
				}
				if !st.IsDir() {
					return fmt.Errorf("init %s: not a directory", args[0])
				}
			}
			g.ensureModel(ctx)
			if err := runInit(ctx, g, asJSON); err != nil {
				return err
			}
			if len(args) == 1 && !asJSON {
				fmt.Fprintf(g.stdout, "mine it with: mempalace mine %s\n", args[0])
			}
			return nil
		})
	f := cmd.Flags()
	f.BoolVarP(&yes, "yes", "y", false, "accepted: hivemem never prompts")
	f.BoolVar(&noLLM, "no-llm", false, "accepted: init uses no LLM")
	jsonFlag(cmd, &asJSON)
	return cmd
}
