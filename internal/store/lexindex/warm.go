package lexindex

import (
	"context"
	"sync"
	"sync/atomic"
)

// Warm is the lifecycle both backends give their index: off until a
// process asks for it (Enable), built in the background on demand (Kick),
// replaced only by a newer build, and stopped with the store (Stop). Data
// is guarded by Mu; a backend decides when Data is current and how to
// bring it up to date.
type Warm struct {
	Mu   sync.RWMutex
	Data *Index // nil until built, or when it must be rebuilt

	enabled  atomic.Bool
	building atomic.Bool

	// ctx ends background builds when the store closes; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Enable opts the process in: only processes that call it ever build.
func (w *Warm) Enable() {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil { // first time, or after Stop
		w.ctx, w.cancel = context.WithCancel(context.Background())
	}
	w.enabled.Store(true)
}

// Enabled reports whether Enable was called (and Stop not since).
func (w *Warm) Enabled() bool { return w.enabled.Load() }

// Stop ends a background build and waits for it (at Close, before the
// database closes under it), and drops the index.
func (w *Warm) Stop() {
	w.Mu.Lock()
	w.enabled.Store(false)
	if w.cancel != nil {
		w.cancel()
	}
	w.Mu.Unlock()
	w.wg.Wait()
	w.Mu.Lock()
	w.Data = nil
	w.Mu.Unlock()
}

// Kick starts a background build unless one is running. Callers hold Mu
// (either way), so that Stop cannot miss a build started as it runs. A
// build that fails is dropped (the database keeps answering; the next
// search kicks again); one that succeeds replaces Data unless Data is
// already newer, and then installed (if not nil) is called under Mu.
func (w *Warm) Kick(build func(context.Context) (*Index, error), installed func()) {
	if !w.enabled.Load() || !w.building.CompareAndSwap(false, true) {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.building.Store(false)
		d, err := build(w.ctx)
		if err != nil {
			return
		}
		w.Mu.Lock()
		defer w.Mu.Unlock()
		if w.enabled.Load() && (w.Data == nil || w.Data.Gen < d.Gen) {
			w.Data = d
			if installed != nil {
				installed()
			}
		}
	}()
}

// Wait blocks until a background build that is running ends (tests and
// benchmarks wait for the index this way).
func (w *Warm) Wait() { w.wg.Wait() }
