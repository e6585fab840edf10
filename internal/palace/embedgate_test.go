package palace_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// heldEmbedder is a CPU-bound embedder whose call for a text holding
// "HOLD" blocks until release is closed; it records the first text of
// every call, in call order.
type heldEmbedder struct {
	countingEmbedder
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	calls   []string
}

func (e *heldEmbedder) CPUBound() bool { return true }

func (e *heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, texts[0])
	e.mu.Unlock()
	if strings.Contains(texts[0], "HOLD") {
		close(e.entered)
		<-e.release
	}
	return e.countingEmbedder.Embed(ctx, texts)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMiningEmbedsBeforeWaitingQueries: with a CPU-bound embedder busy on
// a query, and more queries waiting, a mine that comes last gets the
// embedder next: new memory does not wait behind the search load. A
// waiter whose context ends leaves the queue and the turns go on.
func TestMiningEmbedsBeforeWaitingQueries(t *testing.T) {
	f := newFixture(t, nil)
	emb := &heldEmbedder{entered: make(chan struct{}), release: make(chan struct{})}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := palace.New(context.Background(), f.h, st, emb, palace.Options{QueryCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	path := f.write("alice", "# Memory — alice\n\n## 2026-12-01 — new\nminedword arrived while searches ran\n")
	ctx := context.Background()
	search := func(ctx context.Context, q string) error {
		_, err := p.Search(ctx, palace.Query{Text: q, Mode: palace.ModeHybrid})
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = search(ctx, "HOLD the first query") })
	<-emb.entered
	for _, q := range []string{"query one", "query two", "query three"} {
		wg.Go(func() { _ = search(ctx, q) })
	}
	cctx, cancel := context.WithCancel(ctx)
	canceled := make(chan error, 1)
	go func() { canceled <- search(cctx, "query canceled") }()
	waitUntil(t, "four queries waiting", func() bool { _, q := p.EmbedWaiting(); return q == 4 })
	cancel()
	if err := <-canceled; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled query: %v, want context.Canceled", err)
	}
	var mineErr error
	wg.Go(func() { _, mineErr = p.Mine(ctx, path, palace.MineOptions{}) })
	waitUntil(t, "the mine waiting", func() bool { m, q := p.EmbedWaiting(); return m == 1 && q == 3 })
	close(emb.release)
	wg.Wait()
	if mineErr != nil {
		t.Fatal(mineErr)
	}
	emb.mu.Lock()
	calls := emb.calls
	emb.mu.Unlock()
	if len(calls) != 5 || !strings.Contains(calls[1], "minedword") {
		t.Fatalf("embedder calls %q: want the held query, then the mine, then the three waiting queries", calls)
	}
	for _, c := range calls {
		if strings.Contains(c, "canceled") {
			t.Errorf("the canceled query still embedded: %q", calls)
		}
	}
	if m, q := p.EmbedWaiting(); m != 0 || q != 0 {
		t.Errorf("waiters left: %d mining, %d queries", m, q)
	}
}
