package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/bench/longmemeval"
	"github.com/hivemem/hivemem/internal/wiring"
)

type benchLMEOptions struct {
	benchCommon
	limit       int
	assistant   bool
	embedSample int
	noDate      bool
	results     int
}

func newBenchLongMemEvalCommand(g *globals) *cobra.Command {
	var o benchLMEOptions
	cmd := leafCommand("longmemeval <longmemeval.json[.gz]>",
		"LongMemEval retrieval benchmark: recall_any/recall_all@1/3/5/10, NDCG@10, MRR, latency, mine and embedder throughput",
		cobra.ExactArgs(1), func(ctx context.Context, args []string) error { return runBenchLongMemEval(ctx, g, o, args[0]) })
	cmd.Long = "Imports each question's haystack through the generic importer (as `hivemem import generic` does) as one agent's\n" +
		"session files (one per session, named by a digest of its id, a dated \"## \" section per exchange, one line per\n" +
		"user turn), all in one palace so sessions shared between haystacks share the embedding cache, mined by the normal\n" +
		"miner; every question runs through the normal search path scoped to its wing and room session. Sessions are\n" +
		"ranked by their best drawer. Each question is searched as of its question_date (a time it names, \"a week\n" +
		"ago\", is counted from that day). Scores are given over all questions, without the abstention (_abs) questions,\n" +
		"and in the paper's view (abstention and single-session-assistant questions left out), and per question type."
	f := cmd.Flags()
	f.IntVar(&o.limit, "limit", 0, "questions to run, spread evenly over the file (0 = all)")
	o.addFlags(f, "build the benchmark home in this directory and keep it; a later run on it reuses the mined palace and its embedding cache")
	f.BoolVar(&o.assistant, "assistant-turns", false, "import assistant turns too (otherwise only user turns are imported)")
	f.BoolVar(&o.noDate, "no-question-date", false, "search as of today instead of each question's question_date (ablation: \"a week ago\" is then counted from today)")
	f.IntVar(&o.results, "results", longmemeval.DefaultResults, "hits each question asks for (the rankers take max(search.candidate_pool, 3 × this) candidates each)")
	f.IntVar(&o.embedSample, "embedder-sample", longmemeval.DefaultEmbedSample, "distinct drawer texts to time the embedder alone on, after the mine (0 = skip)")
	return cmd
}

func runBenchLongMemEval(ctx context.Context, g *globals, o benchLMEOptions, path string) error {
	if err := longmemeval.CheckRun(o.limit, o.results, o.embedSample); err != nil {
		return err
	}
	qs, err := longmemeval.Load(path, longmemeval.LoadOptions{Limit: o.limit, AssistantTurns: o.assistant})
	if err != nil {
		return err
	}
	b, done, err := o.openHome(ctx, g, "longmemeval", wiring.Options{})
	if err != nil {
		return err
	}
	defer done()
	sample := o.embedSample
	if sample == 0 {
		sample = -1
	}
	p := newPhaseProgress(g, !o.asJSON)
	res, err := longmemeval.Run(ctx, b.Palace, qs, longmemeval.Options{
		Modes: o.modes, Dataset: path, AssistantTurns: o.assistant, NoQuestionDate: o.noDate, Results: o.results, EmbedSample: sample, Progress: p.report,
	})
	p.finish()
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	longmemeval.WriteText(g.stdout, res)
	return nil
}

// phaseProgress shows a progress bar per phase on a terminal; elsewhere
// (a log file) it writes one line as each phase ends.
type phaseProgress struct {
	g       *globals
	on, tty bool
	phase   string
	total   int
	start   time.Time
	bar     countBar
}

func newPhaseProgress(g *globals, on bool) *phaseProgress {
	return &phaseProgress{g: g, on: on, tty: isTerminal(g.stderr)}
}

func (p *phaseProgress) report(phase string, done, total int) {
	if !p.on {
		return
	}
	if phase != p.phase {
		p.finish()
		p.phase, p.total, p.start = phase, total, time.Now()
		p.bar = p.g.countBar(phase, total, false)
	}
	p.total = total
	p.bar.set(done, total)
}

func (p *phaseProgress) finish() {
	if p.phase == "" {
		return
	}
	p.bar.finish()
	p.bar = countBar{}
	if !p.tty {
		fmt.Fprintf(p.g.stderr, "%s: %d done in %.1fs\n", p.phase, p.total, time.Since(p.start).Seconds())
	}
	p.phase = ""
}
