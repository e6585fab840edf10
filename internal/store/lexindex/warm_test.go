package lexindex_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store/lexindex"
)

// kick calls Kick as the backends do, holding Mu.
func kick(w *lexindex.Warm, build func(context.Context) (*lexindex.Index, error), installed func()) {
	w.Mu.RLock()
	defer w.Mu.RUnlock()
	w.Kick(build, installed)
}

// data reads w.Data under its lock.
func data(w *lexindex.Warm) *lexindex.Index {
	w.Mu.RLock()
	defer w.Mu.RUnlock()
	return w.Data
}

// finishes runs f and fails the test if it has not returned long after it
// should have: a guard against a deadlock, not a timing assertion.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return (deadlock?)", what)
	}
}

// builder counts its builds and installs; its builds return gen's index.
type builder struct {
	builds, installs atomic.Int32
}

func (b *builder) build(gen int64, err error) func(context.Context) (*lexindex.Index, error) {
	return func(ctx context.Context) (*lexindex.Index, error) {
		b.builds.Add(1)
		if ctx == nil || ctx.Err() != nil {
			return nil, errors.New("build given a context that is nil or done")
		}
		if err != nil {
			return nil, err
		}
		return lexindex.New(gen, nil), nil
	}
}

func (b *builder) installed() { b.installs.Add(1) }

// kickDoesNothing kicks w with b's build and fails unless nothing was
// built, installed or kept.
func (b *builder) kickDoesNothing(t *testing.T, w *lexindex.Warm, when string) {
	t.Helper()
	kick(w, b.build(1, nil), b.installed)
	finishes(t, "Wait", w.Wait)
	if b.builds.Load() != 0 || b.installs.Load() != 0 || data(w) != nil {
		t.Errorf("Kick %s: %d builds, %d installs, Data %v; want none", when, b.builds.Load(), b.installs.Load(), data(w))
	}
}

func TestWarmNotEnabled(t *testing.T) {
	var w lexindex.Warm
	var b builder
	if w.Enabled() {
		t.Fatal("zero Warm: Enabled() = true")
	}
	b.kickDoesNothing(t, &w, "before Enable")
	finishes(t, "Stop", w.Stop) // before Enable: harmless

	// Stopped: Kick does nothing again.
	w.Enable()
	finishes(t, "Stop", w.Stop)
	if w.Enabled() {
		t.Error("after Stop: Enabled() = true")
	}
	b.kickDoesNothing(t, &w, "after Stop")
}

func TestWarmBuildInstalls(t *testing.T) {
	var w lexindex.Warm
	var b builder
	w.Enable()
	w.Enable() // twice is the same
	if !w.Enabled() {
		t.Fatal("after Enable: Enabled() = false")
	}
	kick(&w, b.build(3, nil), b.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 3 {
		t.Fatalf("after a build: Data = %v, want generation 3", d)
	}
	if b.builds.Load() != 1 || b.installs.Load() != 1 {
		t.Errorf("%d builds, %d installs, want 1, 1", b.builds.Load(), b.installs.Load())
	}

	// installed may be nil.
	kick(&w, b.build(4, nil), nil)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 4 {
		t.Errorf("after a build with no callback: Data = %v, want generation 4", d)
	}

	finishes(t, "Stop", w.Stop)
	if w.Enabled() || data(&w) != nil {
		t.Errorf("after Stop: Enabled() = %v, Data = %v, want false, nil", w.Enabled(), data(&w))
	}
}

// TestWarmReenable: Enable after Stop builds again, with a live context
// (Stop cancelled the old one).
func TestWarmReenable(t *testing.T) {
	var w lexindex.Warm
	var b builder
	w.Enable()
	finishes(t, "Stop", w.Stop)
	w.Enable()
	defer w.Stop()
	kick(&w, b.build(5, nil), b.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 5 || b.installs.Load() != 1 {
		t.Errorf("after Stop and Enable: Data = %v, %d installs; want generation 5, 1 install", d, b.installs.Load())
	}
}

func TestWarmFailedBuild(t *testing.T) {
	var w lexindex.Warm
	var b builder
	w.Enable()
	defer w.Stop()
	kick(&w, b.build(3, errors.New("database gone")), b.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d != nil || b.installs.Load() != 0 {
		t.Errorf("after a failed build: Data = %v, %d installs, want nil, 0", d, b.installs.Load())
	}
	// The failure is forgotten: the next Kick builds again.
	kick(&w, b.build(3, nil), b.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 3 || b.builds.Load() != 2 || b.installs.Load() != 1 {
		t.Errorf("after a failed then a good build: Data = %v, %d builds, %d installs, want generation 3, 2, 1", d, b.builds.Load(), b.installs.Load())
	}

	// A failed build leaves the index there is.
	kick(&w, b.build(9, errors.New("database gone")), b.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 3 || b.installs.Load() != 1 {
		t.Errorf("after a failed rebuild: Data = %v, %d installs, want generation 3, 1", d, b.installs.Load())
	}
}

func TestWarmOnlyNewerReplaces(t *testing.T) {
	for _, tc := range []struct {
		name     string
		have     *lexindex.Index
		gen      int64
		installs int32
		want     int64 // Data's generation after the build
	}{
		{"none yet", nil, 5, 1, 5},
		{"older", lexindex.New(5, nil), 4, 0, 5},
		{"same", lexindex.New(5, nil), 5, 0, 5},
		{"newer", lexindex.New(5, nil), 6, 1, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w lexindex.Warm
			var b builder
			w.Enable()
			defer w.Stop()
			w.Mu.Lock()
			w.Data = tc.have
			w.Mu.Unlock()
			kick(&w, b.build(tc.gen, nil), b.installed)
			finishes(t, "Wait", w.Wait)
			d := data(&w)
			if d == nil || d.Gen != tc.want || b.installs.Load() != tc.installs {
				t.Errorf("Data = %v, %d installs, want generation %d, %d installs", d, b.installs.Load(), tc.want, tc.installs)
			}
			if tc.installs == 0 && d != tc.have {
				t.Error("the index there was replaced")
			}
		})
	}
}

// TestWarmOneBuildAtATime kicks while a build runs: nothing more starts.
func TestWarmOneBuildAtATime(t *testing.T) {
	var w lexindex.Warm
	var b, other builder
	w.Enable()
	defer w.Stop()
	started, release := make(chan struct{}), make(chan struct{})
	kick(&w, func(ctx context.Context) (*lexindex.Index, error) {
		close(started)
		<-release
		return b.build(1, nil)(ctx)
	}, b.installed)
	<-started
	kick(&w, other.build(2, nil), other.installed)
	kick(&w, other.build(2, nil), other.installed)
	close(release)
	finishes(t, "Wait", w.Wait)
	if other.builds.Load() != 0 {
		t.Errorf("%d builds started while one ran, want 0", other.builds.Load())
	}
	if d := data(&w); d == nil || d.Gen != 1 || b.installs.Load() != 1 {
		t.Errorf("Data = %v, %d installs, want generation 1, 1", d, b.installs.Load())
	}
	// Once it is over, Kick builds again.
	kick(&w, other.build(2, nil), other.installed)
	finishes(t, "Wait", w.Wait)
	if d := data(&w); d == nil || d.Gen != 2 || other.builds.Load() != 1 || other.installs.Load() != 1 {
		t.Errorf("next build: Data = %v, %d builds, %d installs, want generation 2, 1, 1", d, other.builds.Load(), other.installs.Load())
	}
}

// TestWarmStopDuringBuild stops while a build runs: Stop cancels it, waits
// for it, and nothing it returns is installed, even a success.
func TestWarmStopDuringBuild(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  bool // the build returns its context's error (else a success)
	}{{"build fails on cancel", true}, {"build succeeds anyway", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var w lexindex.Warm
			var installs atomic.Int32
			w.Enable()
			started, returned := make(chan struct{}), make(chan struct{})
			kick(&w, func(ctx context.Context) (*lexindex.Index, error) {
				defer close(returned)
				close(started)
				<-ctx.Done() // only Stop ends it
				if tc.err {
					return nil, ctx.Err()
				}
				return lexindex.New(1, nil), nil
			}, func() { installs.Add(1) })
			<-started
			finishes(t, "Stop", w.Stop)
			select {
			case <-returned:
			default:
				t.Error("Stop returned before the build did")
			}
			if w.Enabled() || data(&w) != nil || installs.Load() != 0 {
				t.Errorf("after Stop: Enabled() = %v, Data = %v, %d installs, want false, nil, 0", w.Enabled(), data(&w), installs.Load())
			}
			finishes(t, "Wait", w.Wait)
		})
	}
}
