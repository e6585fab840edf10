package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
)

// ModelChangeByAnotherProcess holds a palace that several processes use
// at once to one embedding model: open must return a new handle on the
// same palace (empty at the first call) each time it is called, as
// another process would open it. When one handle switches the palace to
// its model (as palace.New does: ClearVectors, then SetModel), a handle
// still embedding with the old one (same dimension, so no dimension check
// catches it) must neither store its vectors nor score its queries
// against the new model's vectors (nor read them, Vectors): each fails
// with store.ErrModelChanged, saying to restart. Its other work goes on.
func ModelChangeByAnotherProcess(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := t.Context()
	const dim = 4
	axis := func(i int) []float32 {
		v := make([]float32, dim)
		v[i] = 1
		return v
	}
	withVec := func(d store.Drawer, v []float32) store.Drawer {
		d.Vector = v
		return d
	}
	d1 := withVec(drawer("a.md", 1, "w", "r", "", "", "one", "alpha one"), axis(0))
	d2 := withVec(drawer("a.md", 2, "w", "r", "", "", "two", "alpha two"), axis(0))
	d3 := drawer("a.md", 3, "w", "r", "", "", "three", "alpha three")

	a := open(t)
	if err := a.SetModel(ctx, "m1", dim); err != nil {
		t.Fatal(err)
	}
	apply(t, a, store.FileUpdate{File: file("a.md", "w", ""), Insert: []store.Drawer{d1}})
	if _, err := a.Vector(ctx, axis(0), store.Filter{}, 5); err != nil {
		t.Fatal(err)
	}

	b := open(t)
	if err := b.ClearVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.SetModel(ctx, "m2", dim); err != nil {
		t.Fatal(err)
	}

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrModelChanged) || !strings.Contains(err.Error(), `"m2"`) || !strings.Contains(err.Error(), "restart") {
			t.Errorf("%s by the handle still on m1: %v, want store.ErrModelChanged naming m2 and saying to restart", what, err)
		}
	}
	refused("Apply with a vector", a.Apply(ctx, store.FileUpdate{File: file("a.md", "w", ""), Insert: []store.Drawer{d2}}))
	refused("SetVectors", a.SetVectors(ctx, []string{d1.ID}, [][]float32{axis(0)}))
	_, err := a.Vector(ctx, axis(0), store.Filter{}, 5)
	refused("Vector", err)
	_, err = a.Vectors(ctx, []string{d1.ID})
	refused("Vectors", err)
	// Work without vectors goes on.
	apply(t, a, store.FileUpdate{File: file("a.md", "w", ""), Insert: []store.Drawer{d3}})
	if res, err := a.Lexical(ctx, "alpha", store.Filter{}, 5); err != nil || len(res) != 2 {
		t.Errorf("Lexical by the handle still on m1: %v, %v; want d1 and d3", scoredIDs(res), err)
	}

	// The new model's handles store and search its vectors; none of m1's
	// got in.
	if err := b.SetVectors(ctx, []string{d1.ID, d3.ID}, [][]float32{axis(1), axis(1)}); err != nil {
		t.Fatal(err)
	}
	c := open(t)
	for name, s := range map[string]store.Store{"the handle that switched": b, "a handle opened since": c} {
		res, err := s.Vector(ctx, axis(1), store.Filter{}, 5)
		if err != nil {
			t.Fatalf("Vector by %s: %v", name, err)
		}
		if got := scoredIDs(res); !slices.Equal(got, []string{d1.ID, d3.ID}) || res[0].Score < 0.999 || res[1].Score < 0.999 {
			t.Errorf("Vector by %s: %v %v, want d1 and d3 with m2's vectors only", name, got, res)
		}
	}

	// The old handle, restarted to its model, takes the palace back: now
	// the others are the stale ones.
	if err := a.ClearVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.SetModel(ctx, "m1", dim); err != nil {
		t.Fatal(err)
	}
	if err := a.SetVectors(ctx, []string{d1.ID}, [][]float32{axis(0)}); err != nil {
		t.Errorf("SetVectors after switching back: %v", err)
	}
	if _, err := c.Vector(ctx, axis(1), store.Filter{}, 5); !errors.Is(err, store.ErrModelChanged) {
		t.Errorf("Vector by a handle on m2 after the switch back to m1: %v, want store.ErrModelChanged", err)
	}
}
