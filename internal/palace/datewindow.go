package palace

import (
	"fmt"
	"sort"
	"time"

	"github.com/hivemem/hivemem/internal/when"
)

// dateWeight is the share of the best candidate's score that a drawer
// dated at the time the query names gains (less the farther from it,
// nothing outside the window's slack). Scaling by the best score puts the
// bonus on the ranking's own scale, so it means the same under score
// fusion and under RRF. Chosen on the even-indexed LongMemEval questions
// and checked on the odd ones (README, "Benchmarks").
const dateWeight = 0.3

// asOf is the moment a query is asked: its AsOf date, else now.
func (q Query) asOf() (time.Time, error) {
	if q.AsOf == "" {
		return time.Now(), nil
	}
	t, err := time.Parse(time.DateOnly, q.AsOf)
	if err != nil {
		return time.Time{}, badQuery{fmt.Errorf("as-of: %w", err)}
	}
	return t, nil
}

// boostDateWindow lifts the candidates dated in the windows of the time
// expressions in text ("a week ago", "last Saturday", "in the past two
// months"; package when), resolved against ref: each gains weight times
// the best candidate's score times how well its date fits (1 inside a
// window, falling off with the distance outside), and rs is ordered
// again, best first (ties keep their order). It only re-ranks: undated
// drawers and those outside every window keep their scores, and with no
// time expression, or no candidate dated in a window, rs comes back as
// it was.
func boostDateWindow(rs []rankedDrawer, text string, ref time.Time, weight float64) []rankedDrawer {
	if len(rs) == 0 {
		return rs
	}
	ws := when.Find(text, ref)
	if len(ws) == 0 {
		return rs
	}
	top := rs[0].f.Score
	for _, r := range rs[1:] {
		top = max(top, r.f.Score)
	}
	if top <= 0 {
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
		out[i].f.Score += weight * top * g
	}
	if out == nil {
		return rs
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].f.Score > out[j].f.Score })
	return out
}
