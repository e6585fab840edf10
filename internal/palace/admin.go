package palace

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hivemem/hivemem/internal/store"
)

// Reindex drops the index and rebuilds it from the markdown: the hive, and
// every file mined from outside it that still exists (with its wing and
// agent). Embeddings come back from the cache, so it costs no model time
// for text seen before.
func (p *Palace) Reindex(ctx context.Context) (MineReport, error) {
	files, err := p.store.Files(ctx, "")
	if err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	var outside []store.File
	for _, f := range files {
		if !strings.HasPrefix(f.Source, "hive/") {
			outside = append(outside, f)
		}
	}
	if err := p.store.Reset(ctx); err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	if err := p.home.Init(); err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	rep, err := p.Mine(ctx, p.home.HiveDir(), MineOptions{})
	if err != nil {
		return rep, fmt.Errorf("reindex: %w", err)
	}
	for _, f := range outside {
		if _, err := os.Stat(p.home.Abs(f.Source)); err != nil {
			continue
		}
		r, err := p.Mine(ctx, p.home.Abs(f.Source), MineOptions{Wing: f.Wing, Agent: f.Agent})
		if err != nil {
			return rep, fmt.Errorf("reindex: %w", err)
		}
		rep.add(r)
	}
	return rep, nil
}
