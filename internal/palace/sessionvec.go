package palace

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/kernel"
)

// sessionVectorWeight is what sessionVectors adds, at most, to a drawer of
// a conversation as near the query as the search's best drawer. Larger
// weights lift LongMemEval more and cost LoCoMo rendered as session files
// (README, "The session rules on both data sets").
const sessionVectorWeight = 0.25

// sessionVectors adds to each drawer of an imported conversation (room
// session, one file per conversation) among the best sessionWindow of rs
// weight times how near the conversation as a whole is to the query —
// the cosine of the query vector qv with the normalised sum of the
// conversation's drawer vectors, scaled on the candidates' own cosines (0
// at the lowest candidate drawer's or below, 1 at the best's or above, so
// a conversation no nearer than the weakest candidate gains nothing, even
// when it is the nearest conversation seen) — and orders rs again, best
// first (ties keep their order). It is
// the session-level view a ranker of whole conversations has, taken from
// the vectors the mine already made (store.Vectors, the copy the vector
// search scans): a conversation about the subject of the query throughout
// outranks one that mentions it in one exchange, which
// lifts the sessions a question about several conversations needs
// (LongMemEval recall_all@5, README "Drawers and headings of imported
// sessions"). Drawers of memory files are left as they are, as in
// boostSessions; so is rs when fewer than two conversations are seen.
func (p *Palace) sessionVectors(ctx context.Context, qv []float32, rs []rankedDrawer, weight float64) ([]rankedDrawer, error) {
	var sources []string
	seen := map[string]bool{}
	for _, r := range rs[:min(len(rs), sessionWindow)] {
		if r.d.Room == chunk.RoomSession && !seen[r.d.Source] {
			seen[r.d.Source] = true
			sources = append(sources, r.d.Source)
		}
	}
	if len(sources) < 2 || p.emb == nil {
		return rs, nil
	}
	// One read for every conversation's drawers (a round trip each would
	// be up to sessionWindow of them), their vectors from the copy the
	// vector search scans (no read of the embedding cache).
	ds, err := p.store.DrawersOf(ctx, sources)
	if err != nil {
		return nil, fmt.Errorf("session vectors: %w", err)
	}
	idsOf := make(map[string][]string, len(sources))
	ids := make([]string, len(ds))
	for i, d := range ds {
		idsOf[d.Source] = append(idsOf[d.Source], d.ID)
		ids[i] = d.ID
	}
	vecs, err := p.store.Vectors(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("session vectors: %w", err)
	}
	near := make(map[string]float64, len(sources))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, src := range sources {
		var sum []float32
		for _, id := range idsOf[src] {
			v, ok := vecs[id]
			if !ok || len(v) != len(qv) {
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
		if r.f.VectorRank > 0 {
			vlo, vhi = min(vlo, r.f.Vector), max(vhi, r.f.Vector)
		}
	}
	if len(near) < 2 || hi <= lo || vhi <= vlo {
		return rs, nil
	}
	out := make([]rankedDrawer, len(rs))
	copy(out, rs)
	for i := range out {
		if c, ok := near[out[i].d.Source]; ok && out[i].d.Room == chunk.RoomSession {
			out[i].f.Score += weight * min(max((c-vlo)/(vhi-vlo), 0), 1)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].f.Score > out[j].f.Score })
	return out, nil
}
