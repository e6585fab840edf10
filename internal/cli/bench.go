package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/bench/locomo"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/wiring"
)

// benchCommon are the options every retrieval benchmark takes: the
// search modes to run, the home to build and keep, and JSON output.
type benchCommon struct {
	modes  []string
	keep   string
	asJSON bool
}

// keepTempHome is the usage of --keep-home for a benchmark that builds
// its home afresh each run.
const keepTempHome = "build the benchmark home in this directory and keep it (default: a temporary one)"

// addFlags adds --modes, --keep-home (described by keepUsage) and --json.
func (c *benchCommon) addFlags(f *pflag.FlagSet, keepUsage string) {
	f.StringSliceVar(&c.modes, "modes", nil, "modes to run (default lexical,vector,hybrid; vector modes need the model)")
	f.StringVar(&c.keep, "keep-home", "", keepUsage)
	f.BoolVar(&c.asJSON, "json", false, "print one JSON object")
}

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

func newBenchCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks of retrieval quality and speed",
	}
	cmd.AddCommand(newBenchLocomoCommand(g), newBenchLagCommand(g), newBenchLongMemEvalCommand(g), newBenchUpdatesCommand(g))
	return groupCommand(cmd)
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
	a, done, err := o.openHome(ctx, g, "locomo", wiring.Options{Command: "bench"})
	if err != nil {
		return err
	}
	defer done()
	dir := a.Home.Root
	if o.coverage {
		if !o.condense {
			return fmt.Errorf("bench locomo: --coverage measures condensed files: give --condense too")
		}
		return runBenchCoverage(ctx, g, o, a, samples, dir)
	}
	lo := locomo.Options{Modes: o.modes, Limit: o.limit, Dataset: path, NoCaptions: o.noCapt, AsSessions: o.sessions, NoQuestionDate: o.noDate}
	condensed := 0
	if o.condense {
		enabled := a.Config
		enabled.Reflector.Enabled = true
		// The extractive summariser; the whole of each file is mined
		// after Prepare (memory file and archive), so the reflector
		// does not mine itself.
		r := a.ScratchReflector(a.Home, enabled)
		lo.Prepare = func(ctx context.Context, agent string) error {
			res, err := r.Condense(ctx, agent, reflector.Options{Force: true})
			if err != nil {
				return err
			}
			if res.Status == reflector.StatusCondensed {
				condensed++
			}
			return nil
		}
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
	res, err := locomo.Run(mctx, a.Palace, samples, lo)
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
	w := g.stdout
	as := "memory files"
	if res.AsSessions {
		as = "session files"
	}
	fmt.Fprintf(w, "LoCoMo %s: %d conversations as %s, %d questions, %d drawers, mined in %.1fs\n\n", path, res.Conversations, as, res.Questions, res.Drawers, res.MineSeconds)
	fmt.Fprintf(w, "%-8s %8s %8s %10s %8s %8s %6s %7s %8s %8s\n", "mode", "sess@5", "sess@10", "sess@10c14", "turn@5", "turn@10", "MRR", "w/drw", "p50 ms", "p95 ms")
	modes := make([]string, 0, len(res.Modes))
	for m := range res.Modes {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, m := range modes {
		x := res.Modes[m]
		fmt.Fprintf(w, "%-8s %7.1f%% %7.1f%% %9.1f%% %7.1f%% %7.1f%% %6.3f %7.1f %8.2f %8.2f\n", m,
			100*x.SessionRecall5, 100*x.SessionRecall10, 100*x.SessionRecall10Cat, 100*x.TurnRecall5, 100*x.TurnRecall10,
			x.MRR, x.WordsPerDrawer, x.LatencyP50, x.LatencyP95)
	}
	return nil
}

// openHome opens the app for the benchmark name over --keep-home, or
// over a fresh temporary home (removed by done) without it, and says
// (unless --json) when it runs lexical-only. Every mode embeds its
// queries itself (no query cache): latency includes the model.
func (c benchCommon) openHome(ctx context.Context, g *globals, name string, opts wiring.Options) (a *app.App, done func(), err error) {
	dir := c.keep
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hivemem-"+name+"-")
		if err != nil {
			return nil, nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	opts.Logger = g.logger
	h, cfg, err := wiring.LoadHome(dir, true)
	if err == nil {
		cfg.Search.QueryCache = 0 // every query embedded afresh
		a, err = wiring.OpenLoaded(ctx, h, cfg, opts)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if a.Embedder.Note != "" && !c.asJSON {
		fmt.Fprintf(g.stderr, "note: %s — running lexical only\n", a.Embedder.Note)
	}
	return a, func() { a.Close(); cleanup() }, nil
}

// coverageBudgets are the word budgets `bench locomo --coverage` measures.
var coverageBudgets = []int{600, 1500, 3000}

// runBenchCoverage renders every conversation into a home of its own per
// word budget, force-condenses it with the configured settings (only the
// budget changed) and measures how many answers the memory file still
// holds.
func runBenchCoverage(ctx context.Context, g *globals, o benchOptions, a *app.App, samples []locomo.Sample, dir string) error {
	var out []locomo.Coverage
	condensed := map[int]int{}
	for _, budget := range coverageBudgets {
		h, err := home.Resolve(filepath.Join(dir, fmt.Sprintf("coverage-%d", budget)))
		if err != nil {
			return err
		}
		if err := h.Init(); err != nil {
			return err
		}
		cfg := a.Config
		cfg.Reflector.Enabled = true
		cfg.Reflector.WordBudget = budget
		r := a.ScratchReflector(h, cfg)
		texts := map[string]locomo.MemoryText{}
		for _, s := range samples {
			path, err := locomo.WriteMemory(h, s, !o.noCapt)
			if err != nil {
				return err
			}
			res, err := r.Condense(ctx, s.ID, reflector.Options{Force: true})
			var ae *reflector.AbortError
			switch {
			case errors.As(err, &ae):
				// Measured as it is (e.g. too small to shrink): the file
				// is what an agent would have.
				fmt.Fprintf(g.stderr, "note: %s not condensed at word_budget %d: %s\n", s.ID, budget, ae.Message)
			case err != nil:
				return fmt.Errorf("locomo: condense %s: %w", s.ID, err)
			case res.Status == reflector.StatusCondensed:
				condensed[budget]++
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f, err := memfile.Parse(data)
			if err != nil {
				return fmt.Errorf("locomo: %s: %w", path, err)
			}
			texts[s.ID] = locomo.MemoryText{File: string(data), Condensed: f.Condensed()}
		}
		out = append(out, locomo.MeasureCoverage(samples, texts, budget))
	}
	if o.asJSON {
		return writeJSON(g.stdout, map[string]any{"dataset": o.dataset, "conversations": len(samples), "coverage": out})
	}
	w := g.stdout
	fmt.Fprintf(w, "LoCoMo %s: %d conversations; answers (categories 1-4) written in the condensed memory file\n\n", o.dataset, len(samples))
	fmt.Fprintf(w, "%-11s %9s %9s %10s %10s %10s\n", "word_budget", "questions", "cond.words", "file", "condensed", "condensed#")
	for _, c := range out {
		fmt.Fprintf(w, "%-11d %9d %9.0f %9.1f%% %9.1f%% %5d of %d\n", c.WordBudget, c.Questions, c.CondensedWords, 100*c.File, 100*c.Condensed, condensed[c.WordBudget], len(samples))
	}
	return nil
}
