package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/bench/updates"
	"github.com/hivemem/hivemem/internal/wiring"
)

type benchUpdatesOptions struct {
	benchCommon
	seed                     uint64
	agents, subjects, filler int
	pairsPerClass            int
}

func newBenchUpdatesCommand(g *globals) *cobra.Command {
	var o benchUpdatesOptions
	cmd := noArgsCommand("updates",
		"Facts that change: does search put the newest statement of a subject first? current-first, current-above-stale, past-first by mode",
		func(ctx context.Context) error { return runBenchUpdates(ctx, g, o) })
	cmd.Long = "Generates a hive (--seed): per agent, --subjects subjects whose value changes one to three times over dated sections,\n" +
		"worded differently each time, among --filler unrelated sections; mines it into a fresh temporary home and asks a\n" +
		"question per subject (current-first: the newest statement is the top hit; current-above-stale: it ranks above every\n" +
		"older one) and one about an older value by its date (past-first: that older section is the top hit), each in the\n" +
		"agent's wing. Also counts the hits marked superseded, rightly and wrongly.\n\n" +
		"Then pairs of notes, each written by a fresh agent through remember, one after the other: --pairs-per-class changes of\n" +
		"every class of value (a number, a unit, a negation, a state, enabled/disabled, open/closed, before/after, a modal verb,\n" +
		"an access mode, a name, a tool, a colour, a version, a time, a date, a place), as many repeats (case, punctuation, a\n" +
		"list marker, an article, a contraction, a number in words, a phrase moved, spacing) and half as many unrelated pairs:\n" +
		"changes refused (goal 0), repeats written (as few as possible), changes that name the note they restate, and\n" +
		"unrelated notes named as restated (goal 0). --pairs-per-class 0 leaves the pairs out."
	f := cmd.Flags()
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated hive")
	f.IntVar(&o.agents, "agents", 12, "agents (memory files)")
	f.IntVar(&o.subjects, "subjects", 5, "changing subjects per agent")
	f.IntVar(&o.filler, "filler", 25, "unrelated sections per agent")
	f.IntVar(&o.pairsPerClass, "pairs-per-class", 8, "generated changed notes per class of value (and as many repeats); 0: no pairs")
	o.addFlags(f, keepTempHome)
	return cmd
}

func runBenchUpdates(ctx context.Context, g *globals, o benchUpdatesOptions) error {
	if err := updates.CheckRun(updates.GenOptions{Agents: o.agents, Subjects: o.subjects, Filler: o.filler}, o.pairsPerClass); err != nil {
		return err
	}
	b, done, err := o.openHome(ctx, g, "updates", wiring.Options{})
	if err != nil {
		return err
	}
	defer done()
	bar := countBar{}
	res, err := updates.Run(ctx, b.Palace, updates.Options{
		Gen:   updates.GenOptions{Seed: o.seed, Agents: o.agents, Subjects: o.subjects, Filler: o.filler},
		Modes: o.modes,
		Progress: func(done, total int) {
			if done == 1 {
				bar = g.countBar("questions", total, o.asJSON)
			}
			bar.set(done, total)
		},
	})
	bar.finish()
	if err != nil {
		return err
	}
	var pairs *updates.PairResult
	if o.pairsPerClass > 0 {
		pr, err := updates.RunPairs(ctx, updates.PairOptions{Seed: o.seed, PerClass: o.pairsPerClass}, rememberPair(b.App))
		if err != nil {
			return err
		}
		pairs = &pr
	}
	if o.asJSON {
		return writeJSON(g.stdout, struct {
			updates.Result
			Pairs *updates.PairResult `json:"pairs,omitempty"`
		}{res, pairs})
	}
	updates.WriteText(g.stdout, res, pairs)
	return nil
}

// rememberPair writes a pair's notes through remember, as an agent would.
func rememberPair(a *app.App) updates.WriteFunc {
	return func(ctx context.Context, agent, old, new string) (updates.Written, error) {
		if _, err := a.Remember(ctx, app.RememberRequest{Agent: agent, Text: old}); err != nil {
			return updates.Written{}, err
		}
		res, err := a.Remember(ctx, app.RememberRequest{Agent: agent, Text: new})
		if err != nil {
			return updates.Written{}, err
		}
		return updates.Written{Refused: res.Duplicate != nil, Restates: res.Restates != nil}, nil
	}
}
