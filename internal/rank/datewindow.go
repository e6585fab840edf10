package rank

import (
	"sort"
	"time"

	"github.com/hivemem/hivemem/internal/when"
)

// DateWeight is the share of its own score that a candidate dated at the
// time the query names gains (less the farther its date is from it,
// nothing outside the window's slack). A share of its own score, not a
// fixed amount: among the candidates dated then, the best matches gain
// the most, and a weak match is not carried over strong ones only by its
// date; and it is the same under score fusion and under RRF, whatever
// their scales. Chosen on the even-indexed LongMemEval questions and
// checked on the odd ones (README, "Benchmarks").
const DateWeight = 0.6

// NamesPast reports whether one of ws, the times a query names resolved
// against ref, is over before the day it is asked ("last Friday" is; "in
// the past two weeks", which runs to that day, is not): a question about
// then, not about what is current.
func NamesPast(ws []when.Window, ref time.Time) bool {
	today := ref.Format(time.DateOnly)
	for _, w := range ws {
		if w.To.Format(time.DateOnly) < today {
			return true
		}
	}
	return false
}

// BoostDateWindow lifts the candidates dated in ws, the windows of the
// time expressions of a query ("a week ago", "last Saturday", "in the past
// two months"; when.Find against the day it is asked): each gains weight times
// its own score times how well its date fits (1 inside a window, falling
// off with the distance outside), and rs is ordered again, best first
// (ties keep their order). It only re-ranks: undated drawers and those
// outside every window keep their scores, and with no time expression,
// or no candidate dated in a window, rs comes back as it was.
func BoostDateWindow(rs []Ranked, ws []when.Window, weight float64) []Ranked {
	if len(rs) == 0 || len(ws) == 0 {
		return rs
	}
	var out []Ranked
	fit := map[string]float64{} // by date: a session's drawers share one
	for i, r := range rs {
		if r.Drawer.Date == "" {
			continue
		}
		g, ok := fit[r.Drawer.Date]
		if !ok {
			g = DateFit(ws, r.Drawer.Date)
			fit[r.Drawer.Date] = g
		}
		if g == 0 {
			continue
		}
		if out == nil {
			out = make([]Ranked, len(rs))
			copy(out, rs)
		}
		out[i].Fused.Score += weight * out[i].Fused.Score * g
	}
	if out == nil {
		return rs
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Fused.Score > out[j].Fused.Score })
	return out
}

// WithDated is the fused candidates to look at, and how many: the best
// window of them, and then those of dated (found inside a window of the
// time the query names) that rank below it, moved up after them in their
// order, so that the date stage sees them however weak their words. The
// rest follow as they were.
func WithDated(fused []Fused, window int, dated map[string]bool) ([]Fused, int) {
	if len(dated) == 0 || len(fused) <= window {
		return fused, window
	}
	out := make([]Fused, 0, len(fused))
	out = append(out, fused[:window]...)
	var rest []Fused
	for _, f := range fused[window:] {
		if dated[f.ID] {
			out = append(out, f)
		} else {
			rest = append(rest, f)
		}
	}
	n := len(out)
	return append(out, rest...), n
}

// DateFit is how well a drawer's date (YYYY-MM-DD) fits the windows ws:
// the best of their weights, 0 for an undated drawer or one outside every
// window's slack.
func DateFit(ws []when.Window, date string) float64 {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return 0
	}
	fit := 0.0
	for _, w := range ws {
		fit = max(fit, w.Weight(day))
	}
	return fit
}
