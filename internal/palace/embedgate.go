package palace

import (
	"context"
	"slices"
	"sync"
)

// CPUBound is implemented by embedders that compute on this machine's
// cores (MiniLM): each of their calls already spreads over every core, so
// running several at once only makes each slower. The palace runs one such
// call at a time, and gives mining the next turn before any query: under a
// steady stream of searches, new memory would otherwise wait behind every
// query embedding in flight (seconds at 20 searching clients) before it is
// searchable. Queries still get every turn mining does not want, and
// mining wants one batch at a time, so searches keep going between
// batches.
type CPUBound interface {
	CPUBound() bool
}

// embedGate hands out one embedder turn at a time, mining first.
type embedGate struct {
	mu    sync.Mutex
	busy  bool
	mine  []chan struct{} // waiting miners, first come first served
	query []chan struct{} // waiting queries
}

// acquire waits for a turn (mine: for mining, else for a query) until ctx
// ends.
func (g *embedGate) acquire(ctx context.Context, mine bool) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if mine {
		g.mine = append(g.mine, ch)
	} else {
		g.query = append(g.query, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		waiting := false
		for _, q := range []*[]chan struct{}{&g.mine, &g.query} {
			if i := slices.Index(*q, ch); i >= 0 {
				*q = slices.Delete(*q, i, i+1)
				waiting = true
			}
		}
		g.mu.Unlock()
		if !waiting {
			g.release() // the turn came as ctx ended: pass it on
		}
		return ctx.Err()
	}
}

// release ends a turn: the next miner gets it, else the next query.
func (g *embedGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, q := range []*[]chan struct{}{&g.mine, &g.query} {
		if len(*q) > 0 {
			ch := (*q)[0]
			*q = (*q)[1:]
			close(ch)
			return
		}
	}
	g.busy = false
}

// embed runs the embedder for mining (mine) or a query, one CPU-bound
// call at a time (see CPUBound).
func (p *Palace) embed(ctx context.Context, mine bool, texts []string) ([][]float32, error) {
	if p.gate != nil {
		if err := p.gate.acquire(ctx, mine); err != nil {
			return nil, err
		}
		defer p.gate.release()
	}
	return p.emb.Embed(ctx, texts)
}
