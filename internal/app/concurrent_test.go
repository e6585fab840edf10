package app

// The remember / pin path of an opened app: many writers in one process
// (one App and several), pins deduplicated under concurrency.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/writelock"
)

func openSharedHomeApp(t *testing.T, root string) *App {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	return openAt(t, root)
}

// appendByHand appends n sections dated day to the memory file at path
// as an agent does with its own editor, holding no lock ("## day — raw i",
// then the line RAW-i), a millisecond apart.
func appendByHand(path, day string, n int, errs chan<- error) {
	for i := range n {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			errs <- err
			return
		}
		fmt.Fprintf(f, "## %s — raw %d\nRAW-%03d\n", day, i, i)
		f.Close()
		time.Sleep(time.Millisecond)
	}
}

// rememberAndMine appends a note to agent's memory file and mines the
// file, as Remember does once past its checks.
func rememberAndMine(ctx context.Context, a *App, agent, text string) (memory.FileWrite, error) {
	w, err := memory.Remember(ctx, a.home, agent, "", text, time.Now())
	if err != nil {
		return w, err
	}
	return w, mineMemory(ctx, a, agent)
}

// pinAndMine pins fact in agent's memory file and mines the file when
// the fact was added, as Pin does once past its checks.
func pinAndMine(ctx context.Context, a *App, agent, fact string) (memory.FileWrite, error) {
	w, err := memory.Pin(ctx, a.home, agent, fact)
	if err != nil || !w.Added {
		return w, err
	}
	return w, mineMemory(ctx, a, agent)
}

func mineMemory(ctx context.Context, a *App, agent string) error {
	path, err := a.home.MemoryPath(agent)
	if err != nil {
		return err
	}
	_, err = a.palace.Mine(ctx, path, palace.MineOptions{})
	return err
}

// TestConcurrentRememberAndPinKeepEveryNote: goroutines remember and pin through
// one shared App and through separate Apps on the same home (separate
// SQLite handles), and an agent appends raw lines meanwhile. Every note,
// every raw line and every pin is in the file once it is all over, each
// distinct pin exactly once, and the same fact pinned by many writers at
// once is reported "added" exactly once.
func TestConcurrentRememberAndPinKeepEveryNote(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	apps := []*App{openSharedHomeApp(t, root)}
	for range 2 {
		apps = append(apps, openSharedHomeApp(t, root))
	}
	shared := apps[0]
	ctx := context.Background()
	if _, err := rememberAndMine(ctx, shared, "alice", "first note\nFIRST"); err != nil {
		t.Fatal(err)
	}
	path, _ := shared.home.MemoryPath("alice")

	const writers, per = 6, 8
	var wg sync.WaitGroup
	var sameAdded atomic.Int32
	errs := make(chan error, 10*writers*per)
	// Every real caller (CLI, MCP) holds the palace write lock around
	// Remember and Pin; so do these writers, each with its own Lock value
	// (as separate processes would have).
	locked := func(a *App, fn func() error) error {
		release, err := writelock.New(a.home.PalaceDir(), "test").Acquire(ctx, nil)
		if err != nil {
			return err
		}
		defer release()
		return fn()
	}
	for w := range writers {
		a := apps[w%len(apps)]
		wg.Go(func() {
			for i := range per {
				if err := locked(a, func() error {
					_, err := rememberAndMine(ctx, a, "alice", fmt.Sprintf("note %d-%d\nNOTE-%d-%03d", w, i, w, i))
					return err
				}); err != nil {
					errs <- fmt.Errorf("remember: %w", err)
				}
				if err := locked(a, func() error {
					_, err := pinAndMine(ctx, a, "alice", fmt.Sprintf("PIN-%d-%03d", w, i))
					return err
				}); err != nil {
					errs <- fmt.Errorf("pin: %w", err)
				}
				var added bool
				if err := locked(a, func() (err error) {
					res, err := pinAndMine(ctx, a, "alice", "  - the same fact for everyone  ")
					added = res.Added
					return err
				}); err != nil {
					errs <- fmt.Errorf("pin same: %w", err)
				}
				if added {
					sameAdded.Add(1)
				}
			}
		})
	}
	wg.Go(func() { appendByHand(path, "2026-12-01", writers*per, errs) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	text, f := hometest.ReadMemory(t, path)
	pins := map[string]int{}
	for _, p := range f.Pinned() {
		pins[memfile.NormalizeFact(p)]++
	}
	for w := range writers {
		for i := range per {
			if !strings.Contains(text, fmt.Sprintf("NOTE-%d-%03d\n", w, i)) {
				t.Errorf("note %d-%d lost", w, i)
			}
			if n := strings.Count(text, fmt.Sprintf("- PIN-%d-%03d\n", w, i)); n != 1 {
				t.Errorf("pin %d-%d is %d times in the file", w, i, n)
			}
		}
	}
	for i := range writers * per {
		if !strings.Contains(text, fmt.Sprintf("RAW-%03d\n", i)) {
			t.Errorf("raw line %d lost", i)
		}
	}
	if n := strings.Count(text, "the same fact for everyone"); n != 1 || sameAdded.Load() != 1 {
		t.Errorf("the shared fact is %d times in the file and was reported added %d times; want 1 and 1", n, sameAdded.Load())
	}
	kinds := map[memfile.Kind]int{}
	for _, s := range f.Sections {
		kinds[s.Kind]++
	}
	if kinds[memfile.KindPinned] != 1 {
		t.Errorf("%d pinned regions", kinds[memfile.KindPinned])
	}
}
