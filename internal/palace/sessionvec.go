package palace

import (
	"context"
	"fmt"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/rank"
)

// sessionVectors is rank.SessionVectors over the conversations (room
// session, one file per conversation) among the best rank.SessionWindow
// of rs, their drawers' vectors read in one go from the copy the vector
// search scans (store.Vectors; no read of the embedding cache). rs comes
// back as it was when fewer than two conversations are seen or the
// palace has no embedder.
func (p *Palace) sessionVectors(ctx context.Context, qv []float32, rs []rank.Ranked, weight float64) ([]rank.Ranked, error) {
	var sources []string
	seen := map[string]bool{}
	for _, r := range rs[:min(len(rs), rank.SessionWindow)] {
		if r.Drawer.Room == chunk.RoomSession && !seen[r.Drawer.Source] {
			seen[r.Drawer.Source] = true
			sources = append(sources, r.Drawer.Source)
		}
	}
	if len(sources) < 2 || p.emb == nil {
		return rs, nil
	}
	// One read for every conversation's drawers (a round trip each would
	// be up to rank.SessionWindow of them).
	ds, err := p.store.DrawersOf(ctx, sources)
	if err != nil {
		return nil, fmt.Errorf("session vectors: %w", err)
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	vecs, err := p.store.Vectors(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("session vectors: %w", err)
	}
	convs := make(map[string][][]float32, len(sources))
	for _, d := range ds {
		convs[d.Source] = append(convs[d.Source], vecs[d.ID])
	}
	return rank.SessionVectors(qv, rs, convs, weight), nil
}
