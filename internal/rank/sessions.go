package rank

import (
	"math"
	"sort"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/kernel"
)

// SessionWeight is the share of the best other candidate of the same
// session file that BoostSessions adds to a drawer's fused score.
const SessionWeight = 0.3

// SessionWindow is how many of the best fused candidates BoostSessions
// looks at, at the least.
const SessionWindow = 50

// BoostSessions adds to each drawer of an imported conversation (room
// session: one file per conversation) weight times the best fused score of
// another drawer of the same file among rs, and orders rs again, best first
// (ties keep their order). A conversation that came back to the subject in
// several exchanges is likelier to be what the query is after than one
// with a single exchange as strong; among the drawers of one conversation
// the order stays as it was (the best gains the second's share, every
// other the best's). Drawers of other files are left as they are: a memory
// file is an agent's notes on many subjects, where a second match says
// little about the first — one agent's repeated notes must not bury
// another's better one. On LongMemEval (a drawer per exchange) it lifted
// NDCG@10; LoCoMo's memory files are untouched (README, "Benchmarks").
func BoostSessions(rs []Ranked, weight float64) []Ranked {
	type top2 struct {
		best   int // index in rs
		first  float64
		second float64
		n      int
	}
	tops := map[string]*top2{}
	for i, r := range rs {
		if r.Drawer.Room != chunk.RoomSession {
			continue
		}
		t, ok := tops[r.Drawer.Source]
		if !ok {
			t = &top2{best: i}
			tops[r.Drawer.Source] = t
		}
		t.n++
		switch s := r.Fused.Score; {
		case t.n == 1:
			t.first = s
		case s > t.first:
			t.second, t.first, t.best = t.first, s, i
		case t.n == 2 || s > t.second:
			t.second = s
		}
	}
	out := make([]Ranked, len(rs))
	copy(out, rs)
	if len(tops) == 0 {
		return out
	}
	for i := range out {
		t, ok := tops[out[i].Drawer.Source]
		switch {
		case !ok || out[i].Drawer.Room != chunk.RoomSession || t.n < 2:
		case i == t.best:
			out[i].Fused.Score += weight * t.second
		default:
			out[i].Fused.Score += weight * t.first
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Fused.Score > out[j].Fused.Score })
	return out
}

// SessionVectorWeight is what sessionVectors adds, at most, to a drawer of
// a conversation as near the query as the search's best drawer. Larger
// weights lift LongMemEval more and cost LoCoMo rendered as session files
// (README, "The session rules on both data sets").
const SessionVectorWeight = 0.25

// SessionVectors adds to each drawer of an imported conversation (room
// session, one file per conversation) weight times how near the
// conversation as a whole is to the query — the cosine of the query
// vector qv with the normalised sum of the conversation's drawer vectors
// (convs: by source, its drawers' vectors in the order the index keeps
// them, nil for one not embedded yet), scaled on the candidates' own
// cosines (0 at the lowest candidate drawer's or below, 1 at the best's
// or above, so a conversation no nearer than the weakest candidate gains
// nothing, even when it is the nearest conversation seen) — and orders rs
// again, best first (ties keep their order). It is the session-level view
// a ranker of whole conversations has: a conversation about the subject
// of the query throughout outranks one that mentions it in one exchange,
// which lifts the sessions a question about several conversations needs
// (LongMemEval recall_all@5, README "Drawers and headings of imported
// sessions"). Drawers of memory files are left as they are, as in
// BoostSessions; so is rs when fewer than two conversations have a vector.
func SessionVectors(qv []float32, rs []Ranked, convs map[string][][]float32, weight float64) []Ranked {
	near := make(map[string]float64, len(convs))
	lo, hi := math.Inf(1), math.Inf(-1)
	for src, vs := range convs {
		var sum []float32
		for _, v := range vs {
			if len(v) != len(qv) {
				continue // not embedded yet
			}
			if sum == nil {
				sum = make([]float32, len(v))
			}
			for i, x := range v {
				sum[i] += x
			}
		}
		n := math.Sqrt(float64(kernel.Dot(sum, sum)))
		if sum == nil || n == 0 {
			continue
		}
		c := float64(kernel.Dot(qv, sum)) / n
		near[src] = c
		lo, hi = min(lo, c), max(hi, c)
	}
	// The scale: the vector side's cosines of the candidates.
	vlo, vhi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		if r.Fused.VectorRank > 0 {
			vlo, vhi = min(vlo, r.Fused.Vector), max(vhi, r.Fused.Vector)
		}
	}
	if len(near) < 2 || hi <= lo || vhi <= vlo {
		return rs
	}
	out := make([]Ranked, len(rs))
	copy(out, rs)
	for i := range out {
		if c, ok := near[out[i].Drawer.Source]; ok && out[i].Drawer.Room == chunk.RoomSession {
			out[i].Fused.Score += weight * min(max((c-vlo)/(vhi-vlo), 0), 1)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Fused.Score > out[j].Fused.Score })
	return out
}
