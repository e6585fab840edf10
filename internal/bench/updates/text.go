package updates

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// WriteText writes res as a table by mode, then the pairs (when run).
func WriteText(w io.Writer, res Result, pairs *PairResult) {
	fmt.Fprintf(w, "updates (seed %d): %d agents, %d subjects, %d sections, %d drawers, mined in %.1fs\n\n",
		res.Seed, res.Agents, res.Subjects, res.Sections, res.Drawers, res.MineSeconds)
	fmt.Fprintf(w, "%-8s %9s %9s %9s %9s %8s %8s %7s %7s\n", "mode", "cur-first", "cur>stale", "cur@5", "past-1st", "marked", "wrong/q", "p50 ms", "p95 ms")
	for _, m := range slices.Sorted(maps.Keys(res.Modes)) {
		x := res.Modes[m]
		fmt.Fprintf(w, "%-8s %8.1f%% %8.1f%% %8.1f%% %8.1f%% %7.1f%% %8.3f %7.2f %7.2f\n", m,
			100*x.CurrentFirst, 100*x.CurrentAboveStale, 100*x.CurrentAt5, 100*x.PastFirst, 100*x.StaleMarked, x.WrongMarks,
			x.LatencyP50, x.LatencyP95)
	}
	pairs.WriteText(w)
}

// WriteText writes the pairs part of bench updates (nothing for a nil p).
func (p *PairResult) WriteText(w io.Writer) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "\npairs (seed %d), each written by a fresh agent through remember:\n", p.Seed)
	fmt.Fprintf(w, "  changes refused as repeats  %3d of %d\n", p.ChangesRefused, p.Changes)
	fmt.Fprintf(w, "  changes naming what they restate %3d of %d\n", p.ChangesRestating, p.Changes)
	fmt.Fprintf(w, "  repeats written             %3d of %d\n", p.RepeatsWritten, p.Repeats)
	fmt.Fprintf(w, "  unrelated named as restated %3d of %d\n", p.WrongRestates, p.Unrelated)
	for _, m := range p.Misses {
		fmt.Fprintf(w, "  miss: %s\n", m)
	}
}

// CheckRun checks the sizes of a run as `hivemem bench updates` takes
// them: agents, subjects, filler and pairs per class (0: no pairs) up to
// 1000.
func CheckRun(gen GenOptions, pairsPerClass int) error {
	for _, n := range []struct {
		name string
		v    int
	}{{"agents", gen.Agents}, {"subjects", gen.Subjects}, {"filler", gen.Filler}, {"pairs-per-class", max(pairsPerClass, 1)}} {
		if n.v < 1 || n.v > 1000 {
			return fmt.Errorf("bench updates: --%s must be between 1 and 1000, got %d", n.name, n.v)
		}
	}
	return nil
}
