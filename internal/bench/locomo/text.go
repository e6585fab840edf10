package locomo

import (
	"fmt"
	"io"
	"sort"
)

// WriteText writes res, the run over the data set at path, as a table
// by mode.
func WriteText(w io.Writer, path string, res Result) {
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
}
