package longmemeval

import (
	"fmt"
	"io"
	"sort"
)

// WriteText writes res as tables: the run, then each view of the
// questions by mode, latency, and each mode by question type.
func WriteText(w io.Writer, res Result) {
	turns := "user turns"
	if res.AssistantTurns {
		turns = "user and assistant turns"
	}
	fmt.Fprintf(w, "LongMemEval %s: %d questions (%d abstention), %d sessions (%d distinct), %s, %d drawers\n",
		res.Dataset, res.Questions, res.Abstention, res.Sessions, res.DistinctSessions, turns, res.Drawers)
	fmt.Fprintf(w, "mined in %.1fs (embedded %d, cache %d): %d tokens", res.MineSeconds, res.Embedded, res.EmbedCacheHits, res.Tokens)
	if res.MineTokensPerSecond > 0 {
		fmt.Fprintf(w, ", %.0f tokens/s", res.MineTokensPerSecond)
	}
	if res.EmbedderTokensPerSecond > 0 {
		fmt.Fprintf(w, "; embedder alone %.0f tokens/s on %d texts (%d tokens)", res.EmbedderTokensPerSecond, res.EmbedderSampleTexts, res.EmbedderSampleTokens)
		if res.MineTokensPerSecond > 0 {
			fmt.Fprintf(w, ": mine at %.0f%% of the embedder", 100*res.MineTokensPerSecond/res.EmbedderTokensPerSecond)
		}
	}
	fmt.Fprintln(w)
	modes := make([]string, 0, len(res.Modes))
	for m := range res.Modes {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	views := []struct {
		name string
		of   func(Metrics) Scores
	}{
		{"all questions", func(m Metrics) Scores { return m.Scores }},
		{"without abstention", func(m Metrics) Scores { return m.NoAbstention }},
		{"paper view (no abstention, no single-session-assistant)", func(m Metrics) Scores { return m.Paper }},
	}
	header := func(first string) {
		fmt.Fprintf(w, "%-34s %6s %6s %6s %6s  %6s %6s %6s %6s  %7s %6s\n", first,
			"any@1", "any@3", "any@5", "any@10", "all@1", "all@3", "all@5", "all@10", "ndcg@10", "MRR")
	}
	row := func(name string, s Scores) {
		fmt.Fprintf(w, "%-34s %6.3f %6.3f %6.3f %6.3f  %6.3f %6.3f %6.3f %6.3f  %7.3f %6.3f\n", name,
			s.RecallAny1, s.RecallAny3, s.RecallAny5, s.RecallAny10, s.RecallAll1, s.RecallAll3, s.RecallAll5, s.RecallAll10, s.NDCG10, s.MRR)
	}
	for _, v := range views {
		n := 0
		if len(modes) > 0 {
			n = v.of(res.Modes[modes[0]]).Questions
		}
		fmt.Fprintf(w, "\n%s (n = %d)\n", v.name, n)
		header("mode")
		for _, m := range modes {
			row(m, v.of(res.Modes[m]))
		}
	}
	fmt.Fprintf(w, "\n%-8s %7s %8s %8s\n", "mode", "w/drw", "p50 ms", "p95 ms")
	for _, m := range modes {
		x := res.Modes[m]
		fmt.Fprintf(w, "%-8s %7.1f %8.2f %8.2f\n", m, x.WordsPerDrawer, x.LatencyP50, x.LatencyP95)
	}
	for _, m := range modes {
		x := res.Modes[m]
		types := make([]string, 0, len(x.ByType))
		for t := range x.ByType {
			types = append(types, t)
		}
		sort.Strings(types)
		fmt.Fprintf(w, "\nby question type, %s\n", m)
		header("type (n)")
		for _, t := range types {
			s := x.ByType[t]
			row(fmt.Sprintf("%s (%d)", t, s.Questions), s)
		}
	}
}
