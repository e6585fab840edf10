package palace

import (
	"sort"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/when"
)

// dateWeight is the share of its own score that a candidate dated at the
// time the query names gains (less the farther its date is from it,
// nothing outside the window's slack). A share of its own score, not a
// fixed amount: among the candidates dated then, the best matches gain
// the most, and a weak match is not carried over strong ones only by its
// date; and it is the same under score fusion and under RRF, whatever
// their scales. Chosen on the even-indexed LongMemEval questions and
// checked on the odd ones (README, "Benchmarks").
const dateWeight = 0.6

// asOf is the moment a query is asked: its AsOf date, else now.
func (q Query) asOf() (time.Time, error) {
	if q.AsOf == "" {
		return time.Now(), nil
	}
	if err := store.CheckDate("as of", q.AsOf); err != nil {
		return time.Time{}, badQuery{err}
	}
	return time.Parse(time.DateOnly, q.AsOf)
}

// namesPast reports whether one of ws, the times a query names resolved
// against ref, is over before the day it is asked ("last Friday" is; "in
// the past two weeks", which runs to that day, is not): a question about
// then, not about what is current.
func namesPast(ws []when.Window, ref time.Time) bool {
	today := ref.Format(time.DateOnly)
	for _, w := range ws {
		if w.To.Format(time.DateOnly) < today {
			return true
		}
	}
	return false
}

// boostDateWindow lifts the candidates dated in ws, the windows of the
// time expressions of a query ("a week ago", "last Saturday", "in the past
// two months"; when.Find against the day it is asked): each gains weight times
// its own score times how well its date fits (1 inside a window, falling
// off with the distance outside), and rs is ordered again, best first
// (ties keep their order). It only re-ranks: undated drawers and those
// outside every window keep their scores, and with no time expression,
// or no candidate dated in a window, rs comes back as it was.
func boostDateWindow(rs []rankedDrawer, ws []when.Window, weight float64) []rankedDrawer {
	if len(rs) == 0 || len(ws) == 0 {
		return rs
	}
	var out []rankedDrawer
	fit := map[string]float64{} // by date: a session's drawers share one
	for i, r := range rs {
		if r.d.Date == "" {
			continue
		}
		g, ok := fit[r.d.Date]
		if !ok {
			if day, err := time.Parse(time.DateOnly, r.d.Date); err == nil {
				for _, w := range ws {
					g = max(g, w.Weight(day))
				}
			}
			fit[r.d.Date] = g
		}
		if g == 0 {
			continue
		}
		if out == nil {
			out = make([]rankedDrawer, len(rs))
			copy(out, rs)
		}
		out[i].f.Score += weight * out[i].f.Score * g
	}
	if out == nil {
		return rs
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].f.Score > out[j].f.Score })
	return out
}
