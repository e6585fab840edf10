package palace

import (
	"context"
	"time"

	"github.com/hivemem/hivemem/internal/kernel"
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
	rs := make([]rankedDrawer, len(ds))
	for i, d := range ds {
		vs, err := p.emb.Embed(ctx, []string{d.Text})
		if err != nil {
			return nil, err
		}
		rs[i] = rankedDrawer{d, Fused{ID: d.ID, Score: scores[i], Vector: float64(kernel.Dot(qv, vs[0])), VectorRank: i + 1}}
	}
	out, err := p.sessionVectors(ctx, qv, rs, sessionVectorWeight)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.d.ID
	}
	return ids, nil
}

// WordSimilarity is supersession's similarity of the key lines' words
// (wordSimilarity).
func WordSimilarity(docs []map[string]int, idf func(string) float64) [][]float64 {
	return wordSimilarity(docs, idf)
}

// KeyLine is the stems of the line of a drawer with heading and text that
// supersession compares for the question's stems qterms (keyLine).
func KeyLine(heading, text string, qterms []string, idf func(string) float64) map[string]int {
	return keyLine(store.Drawer{Heading: heading, Text: text}, qterms, idf)
}

// DateScopes is the filters a search for q asked at ref fetches
// candidates in for the times it names (dateFetch), and whether q is only
// a time.
func DateScopes(q Query, ref time.Time) ([]store.Filter, bool) {
	df := newDateFetch(q, when.Find(q.Text, ref), 100)
	return df.scopes, df.only
}

// CurrentAbove is currentAbove.
var CurrentAbove = currentAbove

// SubjectCounts is subjectCounts.
var SubjectCounts = subjectCounts
