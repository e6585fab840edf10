package palace

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/store"
)

// ReindexOptions are a reindex's choices.
type ReindexOptions struct {
	// ReportsSkips says the caller shows the report's Skipped itself, as
	// MineOptions.ReportsSkips.
	ReportsSkips bool
}

// Reindex drops the index and rebuilds it from the markdown: the hive, and
// every file mined from outside it that still exists (with its wing, agent
// and room). Embeddings come back from the cache, so it costs no model time
// for text seen before. In a shared palace (store.Writer.Shared) only
// this home's files are dropped and rebuilt; other machines' stay. Each
// skipped file is logged unless opts.ReportsSkips, as for Mine.
func (p *Palace) Reindex(ctx context.Context, opts ReindexOptions) (MineReport, error) {
	files, err := p.store.Files(ctx, "")
	if err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	var outside []store.File
	for _, f := range files {
		if !strings.HasPrefix(f.Source, "hive/") && p.owns(f) {
			outside = append(outside, f)
		}
	}
	if p.store.Shared() {
		for _, f := range files {
			if !p.owns(f) {
				continue
			}
			if err := p.store.DeleteFile(ctx, f.Source); err != nil {
				return MineReport{}, fmt.Errorf("reindex: %w", err)
			}
		}
	} else if err := p.store.Reset(ctx); err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	if err := p.home.Init(); err != nil {
		return MineReport{}, fmt.Errorf("reindex: %w", err)
	}
	rep, err := p.Mine(ctx, p.home.HiveDir(), MineOptions{ReportsSkips: opts.ReportsSkips})
	if err != nil {
		return rep, fmt.Errorf("reindex: %w", err)
	}
	for _, f := range outside {
		if _, err := os.Stat(p.home.Abs(f.Source)); err != nil {
			continue
		}
		agent := f.Agent
		if agent != "" && home.ValidateAgentID(agent) != nil {
			// Mined before --agent was held to the id rule: drop it
			// rather than fail the rebuild.
			p.log.Warn("reindex: dropping an invalid agent id", "source", f.Source, "agent", agent)
			agent = ""
		}
		r, err := p.Mine(ctx, p.home.Abs(f.Source), MineOptions{Wing: f.Wing, Agent: agent, Room: f.Room, ReportsSkips: opts.ReportsSkips})
		if err != nil {
			return rep, fmt.Errorf("reindex: %w", err)
		}
		rep.Add(r)
	}
	return rep, nil
}
