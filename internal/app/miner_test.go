package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/writelock"
)

// openHooked opens a lexical-only home whose every mine goes through hook.
func openHooked(t *testing.T, hook MineHook) *App {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(h.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(t.Context(), Options{Home: h, Config: cfg, Index: testIndex{h: h, cfg: cfg}, MineHook: hook})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestSwapMineHoldsThePalaceWriteLock: the reflector's mine after a swap
// holds the palace write lock while it mines (another handle finds it
// busy), and lets it go after.
func TestSwapMineHoldsThePalaceWriteLock(t *testing.T) {
	var held, probed bool
	var a *App
	a = openHooked(t, func(ctx context.Context, path string, mine func(context.Context) (MineResult, error)) (MineResult, error) {
		done, cancel := context.WithCancel(ctx)
		cancel()
		release, err := writelock.New(a.home.PalaceDir(), "probe").Acquire(done, nil)
		if err == nil {
			release()
		}
		held, probed = errors.Is(err, writelock.ErrBusy), true
		return mine(ctx)
	})
	hometest.WriteMemory(t, a.home, "alice", "# Memory — alice\n\n## 2026-11-20 — a note\nbody\n")
	mem, _ := a.home.MemoryPath("alice")
	rep, err := swapMiner{a}.Mine(t.Context(), mem, palace.MineOptions{})
	if err != nil || rep.Files != 1 {
		t.Fatalf("Mine = %+v, %v", rep, err)
	}
	if !probed || !held {
		t.Errorf("the lock was not held during the mine (probed %v)", probed)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	release, err := writelock.New(a.home.PalaceDir(), "after").Acquire(ctx, nil)
	if err != nil {
		t.Fatalf("lock still held after the mine: %v", err)
	}
	release()
}

// TestKeepSwapMinesOutlivesItsCaller: a swap mine started under
// KeepSwapMines goes on when its caller's context ends and ends with the
// work context; without it, it ends with its caller's.
func TestKeepSwapMinesOutlivesItsCaller(t *testing.T) {
	type seen struct{ callerDone, workDone bool }
	got := make(chan seen, 1)
	var callerCancel, workCancel context.CancelFunc
	a := openHooked(t, func(ctx context.Context, path string, mine func(context.Context) (MineResult, error)) (MineResult, error) {
		callerCancel() // the pass or the request ends as the mine starts
		time.Sleep(20 * time.Millisecond)
		s := seen{callerDone: ctx.Err() != nil}
		if workCancel != nil {
			workCancel() // the shutdown grace runs out
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			s.workDone = ctx.Err() != nil
		}
		got <- s
		return MineResult{}, ctx.Err()
	})
	hometest.WriteMemory(t, a.home, "alice", "# Memory — alice\n\n## 2026-11-20 — a note\nbody\n")
	mem, _ := a.home.MemoryPath("alice")
	tests := []struct {
		name string
		keep bool
		want seen
	}{
		{"kept until the work ends", true, seen{callerDone: false, workDone: true}},
		{"without it, ends with its caller", false, seen{callerDone: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ctx context.Context
			ctx, callerCancel = context.WithCancel(t.Context())
			workCancel = nil
			if tt.keep {
				var work context.Context
				work, workCancel = context.WithCancel(t.Context())
				ctx = KeepSwapMines(ctx, work)
			}
			_, _ = swapMiner{a}.Mine(ctx, mem, palace.MineOptions{})
			if s := <-got; s != tt.want {
				t.Errorf("mine saw %+v, want %+v", s, tt.want)
			}
		})
	}
}
