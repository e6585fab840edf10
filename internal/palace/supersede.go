package palace

import (
	"context"
	"fmt"

	"github.com/hivemem/hivemem/internal/rank"
)

// Reasons a hit is superseded (Hit.SupersededReason).
const (
	// SupersededNewer: a later dated drawer of the same wing states the
	// same subject (found by ranking, see rank.Supersede).
	SupersededNewer = rank.SupersededNewer
	// SupersededExplicit: the agent wrote that a newer section replaces
	// this one.
	SupersededExplicit = rank.SupersededExplicit
)

// currentAbove is rank.CurrentAbove over hits: a hit marked superseded
// never ranks above its replacement.
func currentAbove(hits []Hit, asOf string) []Hit {
	ps := make([]rank.Placed, len(hits))
	for i, h := range hits {
		ps[i] = rank.Placed{ID: h.ID, SupersededBy: h.SupersededBy, Date: h.Date}
	}
	order := rank.CurrentAbove(ps, asOf)
	if order == nil {
		return hits
	}
	out := make([]Hit, len(order))
	for k, i := range order {
		out[k] = hits[i]
	}
	return out
}

// candidateVectors returns the candidates' vectors from the embedding
// cache, or nil when the palace has no embedder or any is missing.
func (p *Palace) candidateVectors(ctx context.Context, top []rank.Ranked) [][]float32 {
	if p.emb == nil {
		return nil
	}
	hashes := make([]string, len(top))
	for i, r := range top {
		hashes[i] = r.Drawer.Hash
	}
	cached, err := p.store.CachedEmbeddings(ctx, p.emb.ModelID(), hashes)
	if err != nil {
		p.log.Warn("supersession: vectors of the candidates", "err", err)
		return nil
	}
	out := make([][]float32, len(top))
	for i, h := range hashes {
		v, ok := cached[h]
		if !ok {
			return nil
		}
		out[i] = v
	}
	return out
}

// SupersededNote is how text output marks a superseded hit ("" for a
// current one): "superseded by <id> (a newer section states this
// subject)".
func (h Hit) SupersededNote() string {
	if h.SupersededBy == "" {
		return ""
	}
	why := "a newer section states this subject"
	if h.SupersededReason == SupersededExplicit {
		why = "the agent marked it replaced"
	}
	return fmt.Sprintf("superseded by %s (%s)", h.SupersededBy, why)
}
