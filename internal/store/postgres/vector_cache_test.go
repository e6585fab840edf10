package postgres

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// twoProcesses opens two Stores on one fresh exact-mode schema: a writer
// and a reader whose vector cache must follow the writer's changes.
func twoProcesses(t *testing.T) (w, r *Store) {
	t.Helper()
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	open := func() *Store {
		s := mustOpen(t, Options{DSN: dsn, VectorMode: "exact"})
		if s.VectorMode() != ModeExact {
			t.Fatalf("vector mode %q, want %q", s.VectorMode(), ModeExact)
		}
		return s
	}
	return open(), open()
}

// cacheModel is the reference: the drawers written, with their vectors.
type cacheModel struct {
	t    *testing.T
	w, r *Store
	dim  int
	ref  map[string]store.Drawer
	rng  *rand.Rand
	next int
}

// newCacheModel is an empty reference for writer w and reader r, with
// vectors of dimension dim drawn by rng, once w has recorded model.
func newCacheModel(t *testing.T, w, r *Store, model string, dim int, rng *rand.Rand) *cacheModel {
	t.Helper()
	if err := w.SetModel(t.Context(), model, dim); err != nil {
		t.Fatal(err)
	}
	return &cacheModel{t: t, w: w, r: r, dim: dim, ref: map[string]store.Drawer{}, rng: rng}
}

func (m *cacheModel) unit() []float32 { return storetest.UnitVector(m.rng, m.dim) }

func (m *cacheModel) drawer(src string, withVec bool) store.Drawer {
	m.next++
	d := store.Drawer{
		ID: fmt.Sprintf("%s#%d", src, m.next), Wing: fmt.Sprintf("w%d", m.rng.IntN(3)), Room: fmt.Sprintf("r%d", m.rng.IntN(2)),
		Agent: fmt.Sprintf("a%d", m.rng.IntN(2)), Source: src, Heading: "h", LineStart: m.next, LineEnd: m.next,
		Date: fmt.Sprintf("2026-01-%02d", 1+m.rng.IntN(28)), Hash: fmt.Sprint(m.next), Text: "t",
	}
	if withVec {
		d.Vector = m.unit()
	}
	return d
}

// insert writes n new drawers of src, with a vector unless noVec(i) says
// otherwise (nil: all have one).
func (m *cacheModel) insert(src string, n int, noVec func(i int) bool) {
	m.t.Helper()
	u := store.FileUpdate{File: store.File{Source: src}}
	for i := range n {
		u.Insert = append(u.Insert, m.drawer(src, noVec == nil || !noVec(i)))
	}
	m.apply(u)
}

func (m *cacheModel) apply(u store.FileUpdate) {
	m.t.Helper()
	if u.File.Source == "" {
		m.t.Fatal("apply without a source")
	}
	u.File.Hash, u.File.Wing, u.File.Agent = "h", "w", "a"
	if err := m.w.Apply(m.t.Context(), u); err != nil {
		m.t.Fatalf("Apply: %v", err)
	}
	for _, id := range u.Delete {
		delete(m.ref, id)
	}
	for _, d := range u.Insert {
		m.ref[d.ID] = d
	}
	for _, d := range u.Update {
		d.Vector = m.ref[d.ID].Vector
		m.ref[d.ID] = d
	}
}

// missing is the ids of the drawers the writer has no vector for.
func (m *cacheModel) missing() []string {
	m.t.Helper()
	miss, err := m.w.MissingVectors(m.t.Context(), 0)
	if err != nil {
		m.t.Fatalf("MissingVectors: %v", err)
	}
	ids := make([]string, len(miss))
	for i, d := range miss {
		ids[i] = d.ID
	}
	return ids
}

// setVectors gives the drawers ids new vectors, through the writer.
func (m *cacheModel) setVectors(ids []string) {
	m.t.Helper()
	vecs := make([][]float32, len(ids))
	for i, id := range ids {
		vecs[i] = m.unit()
		d := m.ref[id]
		d.Vector = vecs[i]
		m.ref[id] = d
	}
	if err := m.w.SetVectors(m.t.Context(), ids, vecs); err != nil {
		m.t.Fatalf("SetVectors: %v", err)
	}
}

// clearVectors drops every vector, through the writer.
func (m *cacheModel) clearVectors() {
	m.t.Helper()
	if err := m.w.ClearVectors(m.t.Context()); err != nil {
		m.t.Fatalf("ClearVectors: %v", err)
	}
	for id, d := range m.ref {
		d.Vector = nil
		m.ref[id] = d
	}
}

// check searches through the reader and compares with the reference, and
// asserts how the reader's cache was brought up to date: "full" (one
// reload), "delta" (one incremental refresh), "" (neither) or "?" (any).
func (m *cacheModel) check(step, want string) {
	m.t.Helper()
	full0, delta0 := m.r.vec.fullLoads.Load(), m.r.vec.deltas.Load()
	filters := []store.Filter{{}, {Wing: "w1"}, {Room: "r0", Agent: "a1"}, {Since: "2026-01-10", Until: "2026-01-20"}}
	for qi := range 4 {
		q := m.unit()
		for _, f := range filters {
			for _, k := range []int{1, 5, 1000} {
				got, err := m.r.Vector(m.t.Context(), q, f, k)
				if err != nil {
					m.t.Fatalf("%s: Vector: %v", step, err)
				}
				want := storetest.BruteForce(m.ref, q, f, k)
				if !slices.EqualFunc(got, want, func(a, b store.Scored) bool {
					return a.ID == b.ID && a.Rank == b.Rank && math.Abs(a.Score-b.Score) < 1e-5
				}) {
					m.t.Fatalf("%s: query %d %+v k=%d:\n got %v\nwant %v", step, qi, f, k, got, want)
				}
			}
		}
	}
	full, delta := m.r.vec.fullLoads.Load()-full0, m.r.vec.deltas.Load()-delta0
	switch { // "?" asserts nothing
	case want == "full" && (full != 1 || delta != 0),
		want == "delta" && (full != 0 || delta != 1),
		want == "" && (full != 0 || delta != 0):
		m.t.Errorf("%s: %d full reloads and %d incremental refreshes, want one %q", step, full, delta, want)
	}
	m.consistent(step)
}

// consistent checks the cache's own invariants: the id -> row map, the
// parallel slices and the contiguous vectors agree, and hold exactly the
// reference's drawers with vectors.
func (m *cacheModel) consistent(step string) {
	m.t.Helper()
	v := &m.r.vec
	v.mu.RLock()
	defer v.mu.RUnlock()
	if err := v.idx.Check(); err != nil {
		m.t.Fatalf("%s: cache: %v", step, err)
	}
	n := v.idx.Len()
	want := 0
	for _, d := range m.ref {
		if len(d.Vector) > 0 {
			want++
		}
	}
	if n != want {
		m.t.Errorf("%s: cache holds %d drawers, want %d", step, n, want)
	}
	for id, d := range m.ref {
		r, ok := v.idx.Row(id)
		if ok != (len(d.Vector) > 0) || ok && (!slices.Equal(r.Vec, d.Vector) ||
			r.Wing != d.Wing || r.Room != d.Room || r.Agent != d.Agent || r.Date != d.Date) {
			m.t.Fatalf("%s: cache row %q does not match the drawer", step, id)
		}
	}
}

func (m *cacheModel) ids(src string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(m.ref)) {
		if m.ref[id].Source == src {
			out = append(out, id)
		}
	}
	return out
}

// TestVectorCacheFollowsOtherProcess writes through one Store and searches
// through another on the same palace, checking after every kind of write
// that the reader's exact results equal a brute-force ranking and that
// it took the incremental path wherever the write allows.
func TestVectorCacheFollowsOtherProcess(t *testing.T) {
	w, r := twoProcesses(t)
	ctx := t.Context()
	m := newCacheModel(t, w, r, "m1", 16, rand.New(rand.NewPCG(7, 7)))
	m.check("empty", "full")
	m.check("no write", "")

	m.insert("a.md", 40, func(i int) bool { return i%5 == 0 })
	m.check("insert", "delta")

	m.insert("b.md", 30, nil)
	m.check("insert another file", "delta")

	// Metadata: wing, room, agent and date are filter fields in the cache;
	// one update also changes the heading (the re-indexing path).
	var upd []store.Drawer
	for i, id := range m.ids("a.md")[:12] {
		d := m.ref[id]
		d.Wing, d.Room, d.Agent, d.Date = "w1", "r0", "a1", fmt.Sprintf("2026-01-%02d", 10+i)
		if i == 0 {
			d.Heading = "a new heading"
		}
		d.Vector = nil
		upd = append(upd, d)
	}
	m.apply(store.FileUpdate{File: store.File{Source: "a.md"}, Update: upd})
	m.check("update metadata", "delta")

	// Also replace an existing vector: an in-place update of a cached row.
	m.setVectors(append(m.missing(), m.ids("b.md")[3]))
	m.check("set vectors", "delta")

	aIDs := m.ids("a.md")
	m.apply(store.FileUpdate{File: store.File{Source: "a.md"}, Delete: []string{aIDs[0], aIDs[1], aIDs[len(aIDs)-1]}})
	m.check("delete drawers", "delta")
	// Re-insert an id deleted by an earlier write, and delete and insert
	// another in this one (new vector, new wing).
	reborn, again := m.drawer("a.md", true), m.drawer("a.md", true)
	reborn.ID, again.ID = aIDs[1], aIDs[2]
	m.apply(store.FileUpdate{File: store.File{Source: "a.md"}, Delete: []string{aIDs[2]}, Insert: []store.Drawer{reborn, again}})
	m.check("re-insert deleted ids", "delta")

	if err := w.DeleteFile(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	for _, id := range m.ids("b.md") {
		delete(m.ref, id)
	}
	m.check("delete file", "delta")

	// Several writes between two searches: insert, delete it, insert it
	// again, update it; and a drawer inserted then deleted for good.
	x := m.drawer("c.md", true)
	y := m.drawer("c.md", true)
	m.apply(store.FileUpdate{File: store.File{Source: "c.md"}, Insert: []store.Drawer{x, y}})
	m.apply(store.FileUpdate{File: store.File{Source: "c.md"}, Delete: []string{x.ID, y.ID}})
	x.Vector = m.unit()
	m.apply(store.FileUpdate{File: store.File{Source: "c.md"}, Insert: []store.Drawer{x}})
	x.Wing = "w2"
	m.apply(store.FileUpdate{File: store.File{Source: "c.md"}, Update: []store.Drawer{x}})
	m.check("several writes", "delta")

	m.clearVectors()
	m.check("clear vectors", "full")

	// A model change (allowed now that no vector is left) reloads too.
	m.dim = 8
	if err := w.SetModel(ctx, "m2", m.dim); err != nil {
		t.Fatal(err)
	}
	m.check("model change", "full")
	m.setVectors(m.ids("a.md")[:5])
	m.check("set vectors after the model change", "delta")

	if err := w.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	clear(m.ref)
	m.check("reset", "full")
	m.insert("a.md", 10, nil)
	m.check("insert after reset", "delta")

	// The reader's own writes go the same way.
	m.w = r
	m.apply(store.FileUpdate{File: store.File{Source: "d.md"}, Insert: []store.Drawer{m.drawer("d.md", true)}})
	m.check("reader's own write", "delta")
}

// TestVectorCachePrunedTombstones: a cache older than the tombstone floor
// cannot know what was deleted and reloads; one within the horizon stays
// incremental.
func TestVectorCachePrunedTombstones(t *testing.T) {
	w, r := twoProcesses(t)
	ctx := t.Context()
	w.tombHorizon, w.pruneEvery = 3, 1
	m := newCacheModel(t, w, r, "m", 8, rand.New(rand.NewPCG(8, 8)))
	m.insert("a.md", 20, nil)
	m.check("load", "full")

	// Five deleting writes: the first ones' tombstones fall below the floor.
	for i := range 5 {
		m.apply(store.FileUpdate{File: store.File{Source: "a.md"}, Delete: []string{m.ids("a.md")[i]}})
	}
	var floor, gen, old int64
	if err := w.pool.QueryRow(ctx, `SELECT tomb_floor, generation FROM palace`).Scan(&floor, &gen); err != nil {
		t.Fatal(err)
	}
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM tombstones WHERE gen <= $1`, floor).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if floor != gen-3 || old != 0 {
		t.Fatalf("after pruning: tomb_floor %d at generation %d, %d tombstones at or below it", floor, gen, old)
	}
	if r.vec.gen >= floor {
		t.Fatalf("reader's cache (generation %d) is not older than the floor %d", r.vec.gen, floor)
	}
	m.check("older than the floor", "full")

	// Within the horizon: incremental, and the deletion is seen.
	m.apply(store.FileUpdate{File: store.File{Source: "a.md"}, Delete: []string{m.ids("a.md")[0]}})
	m.check("within the horizon", "delta")
}

// TestVectorCacheConcurrentWriters searches through one Store while other
// Stores write, then checks the final state exactly (under -race this also
// checks the cache's locking against concurrent searches).
func TestVectorCacheConcurrentWriters(t *testing.T) {
	w, r := twoProcesses(t)
	ctx := t.Context()
	m := newCacheModel(t, w, r, "m", 16, rand.New(rand.NewPCG(9, 9)))
	// Prepare every write first (the model's rng is not goroutine-safe).
	var ups []store.FileUpdate
	live := map[string][]string{}
	for i := range 60 {
		src := fmt.Sprintf("f%d.md", i%4)
		u := store.FileUpdate{File: store.File{Source: src, Hash: "h", Wing: "w", Agent: "a"}}
		if n := len(live[src]); n > 2 {
			u.Delete = live[src][:2]
			live[src] = live[src][2:]
		}
		for range 3 {
			d := m.drawer(src, true)
			u.Insert = append(u.Insert, d)
			live[src] = append(live[src], d.ID)
		}
		ups = append(ups, u)
	}
	queries := make([][]float32, 20)
	for i := range queries {
		queries[i] = m.unit()
	}
	done := make(chan struct{})
	// The reader says when a search finished. Every 10 writes the writer
	// waits for two more: the second began after those writes, so some
	// search between two such points had to catch up with them. Without
	// this, on a loaded machine the writer could finish before the reader
	// ever ran, and the test would exercise nothing incremental.
	searched := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(done)
		for i, u := range ups {
			if err := w.Apply(ctx, u); err != nil {
				t.Errorf("Apply: %v", err)
				return
			}
			if i%10 == 9 {
				select {
				case <-searched:
				default:
				}
				for range 2 {
					select {
					case <-searched:
					case <-time.After(time.Minute):
						t.Errorf("the reader stopped searching")
						return
					}
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := r.Vector(ctx, queries[i%len(queries)], store.Filter{}, 10); err != nil {
				t.Errorf("Vector: %v", err)
				return
			}
			select {
			case searched <- struct{}{}:
			default:
			}
		}
	}()
	wg.Wait()
	for _, u := range ups {
		for _, id := range u.Delete {
			delete(m.ref, id)
		}
		for _, d := range u.Insert {
			m.ref[d.ID] = d
		}
	}
	m.check("after the writers", "?")
	// Each of the 6 pauses is caught up by a refresh; only the first can
	// have been the initial full load.
	if n := r.vec.deltas.Load(); n < 5 {
		t.Errorf("%d incremental refreshes during the writes, want at least one per pause after the first (5)", n)
	}
	if n := r.vec.fullLoads.Load(); n != 1 {
		t.Errorf("%d full reloads, want 1 (the first search)", n)
	}
}
