package palace

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/rank"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/when"
)

// EmbedWaiting reports how many mining and query calls wait for the
// embedder, for tests of their order.
func (p *Palace) EmbedWaiting() (mine, query int) {
	if p.gate == nil {
		return 0, 0
	}
	p.gate.mu.Lock()
	defer p.gate.mu.Unlock()
	return len(p.gate.mine), len(p.gate.query)
}

// SessionVectorsOrder runs sessionVectors (at its weight) on drawers
// ranked with the given fused scores, best first, each with its cosine
// with qv as the vector side's score, and returns their ids in the order
// it leaves them.
func (p *Palace) SessionVectorsOrder(ctx context.Context, qv []float32, ds []store.Drawer, scores []float64) ([]string, error) {
	rs := make([]rank.Ranked, len(ds))
	for i, d := range ds {
		vs, err := p.emb.Embed(ctx, []string{d.Text})
		if err != nil {
			return nil, err
		}
		rs[i] = rank.Ranked{Drawer: d, Fused: rank.Fused{ID: d.ID, Score: scores[i], Vector: float64(kernel.Dot(qv, vs[0])), VectorRank: i + 1}}
	}
	out, err := p.sessionVectors(ctx, qv, rs, rank.SessionVectorWeight)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.Drawer.ID
	}
	return ids, nil
}

// DateScopes is the filters a search for q asked at ref fetches
// candidates in for the times it names (dateFetch), and whether q is only
// a time.
func DateScopes(q Query, ref time.Time) ([]store.Filter, bool) {
	df := newDateFetch(q, when.Find(q.Text, ref), 100)
	return df.scopes, df.only
}
