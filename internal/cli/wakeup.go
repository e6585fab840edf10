package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type wakeUpOptions struct {
	wing        string
	budget      int
	budgetGiven bool // --budget was given: 0 is refused, not the default
	asJSON      bool
}

func newWakeUpCommand(g *globals) *cobra.Command {
	var o wakeUpOptions
	// The agent may be named as remember, pin and forget name it (an
	// argument) or as MemPalace's harness does (--wing); given both ways,
	// the two must agree.
	cmd := leafCommand("wake-up [agent]", "Print a short digest for a new session: pinned facts, condensed history, newest sections",
		cobra.MaximumNArgs(1), func(ctx context.Context, args []string) error {
			if len(args) == 1 {
				switch {
				case args[0] == "":
					return errors.New("agent is empty: give an agent id, or leave the argument out for one line per agent")
				case o.wing != "" && o.wing != args[0]:
					return fmt.Errorf("agent given twice: %q and --wing %q; give it once", args[0], o.wing)
				}
				o.wing = args[0]
			}
			return runWakeUp(ctx, g, o)
		})
	f := cmd.Flags()
	f.StringVar(&o.wing, "wing", "", "the agent (wing) to wake up, as the argument does; without either, one line per agent")
	f.IntVar(&o.budget, "budget", 0, "token budget, 1 to 100000 (default 800, or search.wake_up_budget)")
	jsonFlag(cmd, &o.asJSON)
	refuseEmpty(cmd, "wing")
	// An explicit --budget 0 is refused (by the app) like a negative one:
	// only leaving the flag out means the default.
	given(cmd, "budget", &o.budgetGiven)
	return cmd
}

func runWakeUp(ctx context.Context, g *globals, o wakeUpOptions) error {
	d, err := request(ctx, g, (*app.App).WakeUp, app.WakeUpRequest{Wing: o.wing, Budget: o.budget, BudgetGiven: o.budgetGiven})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, d)
	}
	fmt.Fprint(g.stdout, d.Text)
	return nil
}
