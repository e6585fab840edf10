package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/bench/locomo"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/wiring"
)

type benchOptions struct {
	benchCommon
	limit    int
	condense bool
	coverage bool
	noCapt   bool
	sessions bool
	noDate   bool
	dataset  string
}

func newBenchLocomoCommand(g *globals) *cobra.Command {
	var o benchOptions
	cmd := leafCommand("locomo <locomo.json>", "LoCoMo retrieval benchmark: session/turn recall@5/@10, MRR, latency; lexical, vector and hybrid in one run", cobra.ExactArgs(1),
		func(ctx context.Context, args []string) error { return runBenchLocomo(ctx, g, o, args[0]) })
	cmd.Long = "Renders each conversation as one agent's memory.md (a section per session), mines it with the normal miner into a\n" +
		"fresh temporary home, and runs every question through the normal search path scoped to its wing. With\n" +
		"--as-sessions each conversation is imported instead as its agent's session files through the generic importer\n" +
		"(as `bench longmemeval` imports a haystack), and the search is scoped to room session too. LoCoMo dates no\n" +
		"question; each is searched as of the day of its conversation's last session (they are asked after it), so that a\n" +
		"time it names (\"last week\") is counted from then."
	f := cmd.Flags()
	f.IntVar(&o.limit, "limit", 0, "questions per conversation (0 = all)")
	o.addFlags(f, keepTempHome)
	f.BoolVar(&o.condense, "condense", false, "force-condense every conversation (extractive summariser) before mining, to measure what condensation costs recall")
	f.BoolVar(&o.coverage, "coverage", false, "with --condense: instead of searching, report the fraction of questions (categories 1-4) whose answer is written in the condensed memory file, and in its condensed region alone, for word_budget 600, 1500 and 3000")
	f.BoolVar(&o.sessions, "as-sessions", false, "import each conversation through the generic importer as its agent's session files (one per LoCoMo session, speaker_a as the user, speaker_b as the assistant; the path bench longmemeval takes) instead of writing it as a memory file, and search room session")
	f.BoolVar(&o.noCapt, "no-captions", false, "leave images shared in a turn out of the rendered memory files (ablation: by default a turn keeps its image caption)")
	f.BoolVar(&o.noDate, "no-question-date", false, "search as of today instead of the day of each conversation's last session (ablation: \"last week\" is then counted from today)")
	return cmd
}

func runBenchLocomo(ctx context.Context, g *globals, o benchOptions, path string) error {
	o.dataset = path
	if o.sessions && o.condense {
		return fmt.Errorf("bench locomo: --condense condenses memory files: not with --as-sessions")
	}
	samples, err := locomo.Load(path)
	if err != nil {
		return err
	}
	b, done, err := o.openHome(ctx, g, "locomo", wiring.Options{Command: "bench"})
	if err != nil {
		return err
	}
	defer done()
	a := b.App
	dir := a.Home().Root
	if o.coverage {
		if !o.condense {
			return fmt.Errorf("bench locomo: --coverage measures condensed files: give --condense too")
		}
		return runBenchCoverage(ctx, g, o, b, samples, dir)
	}
	lo := locomo.Options{Modes: o.modes, Limit: o.limit, Dataset: path, NoCaptions: o.noCapt, AsSessions: o.sessions, NoQuestionDate: o.noDate}
	condensed := 0
	if o.condense {
		enabled := a.Settings()
		enabled.Reflector.Enabled = true
		// The extractive summariser; the whole of each file is mined
		// after Prepare (memory file and archive), so the reflector
		// does not mine itself.
		lo.Prepare = locomo.CondenseEach(locomo.ScratchCondenser(b.Palace, a.Home(), enabled, g.logger), &condensed)
	}
	// On a terminal: the mining (drawers embedded), then the questions.
	mctx, mined := g.mineProgress(ctx, "mining", o.asJSON)
	var qbar countBar
	lo.Progress = func(done, total int) {
		if done == 1 {
			mined()
			qbar = g.countBar("questions", total, o.asJSON)
		}
		qbar.set(done, total)
	}
	res, err := locomo.Run(mctx, b.Palace, samples, lo)
	mined()
	qbar.finish()
	if err != nil {
		return err
	}
	if o.condense && !o.asJSON {
		fmt.Fprintf(g.stderr, "condensed %d of %d conversations before mining\n", condensed, len(samples))
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	locomo.WriteText(g.stdout, path, res)
	return nil
}

// runBenchCoverage measures, per word budget, how many answers a
// force-condensed memory file still holds, condensed with the configured
// settings (only the budget changed).
func runBenchCoverage(ctx context.Context, g *globals, o benchOptions, b wiring.Bench, samples []locomo.Sample, dir string) error {
	cov, err := locomo.MeasureCondensedCoverage(ctx, samples, dir, !o.noCapt, func(h home.Home, budget int) locomo.Condenser {
		cfg := b.App.Settings()
		cfg.Reflector.Enabled = true
		cfg.Reflector.WordBudget = budget
		return locomo.ScratchCondenser(b.Palace, h, cfg, g.logger)
	}, g.stderr)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, map[string]any{"dataset": o.dataset, "conversations": len(samples), "coverage": cov.Coverage})
	}
	cov.WriteText(g.stdout, o.dataset, len(samples))
	return nil
}
