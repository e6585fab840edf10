package postgres

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/store"
)

// Vector implements store.Store: HNSW in SQL in pgvector mode, an exact
// scan of an in-memory copy otherwise.
func (s *Store) Vector(ctx context.Context, q []float32, f store.Filter, k int) ([]store.Scored, error) {
	return s.vector(ctx, q, f, k, false)
}

// VectorExact is Vector without the approximate index: in pgvector mode an
// exact scan in SQL (index scans disabled), in exact mode Vector itself. It
// is the reference the HNSW recall is measured against.
func (s *Store) VectorExact(ctx context.Context, q []float32, f store.Filter, k int) ([]store.Scored, error) {
	return s.vector(ctx, q, f, k, true)
}

func (s *Store) vector(ctx context.Context, q []float32, f store.Filter, k int, exact bool) ([]store.Scored, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	for i, x := range q {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("vector search: query component %d is %v", i, x)
		}
	}
	if !filterStorable(f) {
		return nil, nil
	}
	var res []store.Scored
	var err error
	if s.mode == ModePGVector {
		res, err = s.vectorSQL(ctx, q, f, k, exact)
	} else {
		res, err = s.vectorScan(ctx, q, f, k)
	}
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return res, nil
}

// maxEfSearch is pgvector's upper bound for hnsw.ef_search.
const maxEfSearch = 1000

// vectorSQL orders by cosine distance in SQL. The HNSW index serves the
// ORDER BY when the planner prefers it; ef_search is Options.EfSearch,
// raised to k (up to pgvector's 1000) and, with pgvector 0.8 or later,
// iterative scans keep filtered queries from coming back short.
func (s *Store) vectorSQL(ctx context.Context, q []float32, f store.Filter, k int, exact bool) ([]store.Scored, error) {
	iterative := s.iterative() // before the transaction: the pool may have one connection
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, s.wrap(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	model, dim, err := readModel(ctx, tx)
	if err != nil {
		return nil, s.wrap(err)
	}
	// A query of another model than the vectors' would be scored without
	// meaning.
	if err := store.CheckModel(s.ownModel(), model); err != nil {
		return nil, err
	}
	if dim == 0 {
		return nil, nil
	}
	if len(q) != dim {
		return nil, fmt.Errorf("query has dimension %d, the model's is %d", len(q), dim)
	}
	settings := fmt.Sprintf(`SELECT set_config('hnsw.ef_search', '%d', true)`, min(max(k, s.ef), maxEfSearch))
	if exact {
		settings += `, set_config('enable_indexscan', 'off', true)`
	} else if iterative {
		settings += `, set_config('hnsw.iterative_scan', 'strict_order', true)`
	}
	if _, err := tx.Exec(ctx, settings); err != nil {
		return nil, s.wrap(err)
	}
	where, fargs := filterSQL(f, 2)
	// dim is our own integer: the index's expression needs it as a literal.
	dist := fmt.Sprintf(`d.embedding::vector(%d) <=> $1::vector(%d)`, dim, dim)
	sql := `SELECT d.id, 1 - (` + dist + `) FROM drawers d WHERE d.embedding IS NOT NULL` + where +
		` ORDER BY ` + dist + fmt.Sprintf(` LIMIT %d`, k)
	rows, err := tx.Query(ctx, sql, append([]any{pgvector.NewVector(q)}, fargs...)...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []store.Scored
	for rows.Next() {
		var sc store.Scored
		if err := rows.Scan(&sc.ID, &sc.Score); err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	// The index orders by distance alone; ties go to the smaller id, as in
	// every other path.
	slices.SortStableFunc(out, func(a, b store.Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	return out, nil
}

// iterative reports whether the server's pgvector has iterative index
// scans (0.8.0 and later); asked once.
func (s *Store) iterative() bool {
	s.iterOnce.Do(func() {
		var v string
		if err := s.pool.QueryRow(context.Background(), `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&v); err != nil {
			return
		}
		var major, minor int
		if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err == nil {
			s.iter = major > 0 || minor >= 8
		}
	})
	return s.iter
}

// vecCache is the exact mode's in-memory copy of every vector: one
// contiguous []float32 and the fields filters look at, row i of each slice
// being one drawer (in no particular order: ties are broken by id). When
// the palace generation moved it is brought up to date incrementally (see
// refreshVectors), or reloaded whole.
type vecCache struct {
	mu     sync.RWMutex
	loaded bool
	gen    int64 // the palace generation the copy reflects
	dim    int
	model  string // the palace's model at gen
	vecs   []float32
	ids    []string
	wing   []string
	room   []string
	agent  []string
	date   []string
	row    map[string]int // id -> row

	// How the copy was brought up to date, for tests and benchmarks.
	fullLoads, deltas atomic.Int64
}

func (v *vecCache) invalidate() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
	v.vecs, v.ids, v.wing, v.room, v.agent, v.date, v.row = nil, nil, nil, nil, nil, nil, nil
}

// vectorScan answers from the in-memory copy after checking (one small
// query) that it reflects the current generation.
func (s *Store) vectorScan(ctx context.Context, q []float32, f store.Filter, k int) ([]store.Scored, error) {
	var gen int64
	if err := s.pool.QueryRow(ctx, `SELECT generation FROM palace WHERE id = 1`).Scan(&gen); err != nil {
		return nil, s.wrap(err)
	}
	v := &s.vec
	v.mu.RLock()
	stale := !v.loaded || v.gen != gen
	for stale {
		v.mu.RUnlock()
		v.mu.Lock()
		if err := s.refreshVectors(ctx); err != nil {
			// A half-applied delta must not be searched: reload next time.
			v.loaded = false
			v.mu.Unlock()
			return nil, err
		}
		v.mu.Unlock()
		v.mu.RLock()
		// Between Unlock and RLock another search may have taken the
		// write lock and failed its refresh, leaving the copy half
		// applied (and loaded false, its dimension perhaps not its
		// vectors'): never scan that, refresh again.
		stale = !v.loaded
	}
	defer v.mu.RUnlock()
	// A query of another model than the vectors' would be scored without
	// meaning.
	if err := store.CheckModel(s.ownModel(), v.model); err != nil {
		return nil, err
	}
	if v.dim == 0 {
		return nil, nil
	}
	if len(q) != v.dim {
		return nil, fmt.Errorf("query has dimension %d, the model's is %d", len(q), v.dim)
	}
	all := f == store.Filter{}
	better := func(a, b hit) bool { // a ranks before b
		if a.score != b.score {
			return a.score > b.score
		}
		return v.ids[a.row] < v.ids[b.row]
	}
	// The k best in a min-heap (worst on top): most rows cost one compare.
	top := &hitHeap{better: better}
	d := v.dim
	const block = 512
	var buf [block]float32
	for b := 0; b < len(v.ids); b += block {
		e := min(b+block, len(v.ids))
		out := buf[:e-b]
		kernel.DotBatch(out, q, v.vecs[b*d:e*d], d)
		for j, sc := range out {
			i := b + j
			h := hit{i, sc}
			if len(top.items) == k && !better(h, top.items[0]) {
				continue
			}
			if !all && !f.Matches(store.Drawer{Wing: v.wing[i], Room: v.room[i], Agent: v.agent[i], Date: v.date[i]}) {
				continue
			}
			if len(top.items) < k {
				heap.Push(top, h)
			} else {
				top.items[0] = h
				heap.Fix(top, 0)
			}
		}
	}
	hits := top.items
	slices.SortFunc(hits, func(a, b hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	out := make([]store.Scored, len(hits))
	for i, h := range hits {
		out[i] = store.Scored{ID: v.ids[h.row], Score: float64(h.score), Rank: i + 1}
	}
	return out, nil
}

type hit struct {
	row   int
	score float32
}

// hitHeap is a min-heap of hits under better (the worst on top).
type hitHeap struct {
	items  []hit
	better func(a, b hit) bool
}

func (h *hitHeap) Len() int           { return len(h.items) }
func (h *hitHeap) Less(a, b int) bool { return h.better(h.items[b], h.items[a]) }
func (h *hitHeap) Swap(a, b int)      { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *hitHeap) Push(x any)         { h.items = append(h.items, x.(hit)) }
func (h *hitHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// refreshVectors brings the copy up to the current generation; callers
// hold v.mu for writing. The palace row and the changes are read in one
// repeatable-read snapshot: writers are serialised on the palace row and
// commit in generation order, so the snapshot holds exactly the writes up
// to its generation, each change once. Since the copy was taken at v.gen,
// every drawer inserted or updated since has drawers.gen > v.gen, and every
// one deleted since has a tombstone with gen > v.gen (unless pruned:
// tomb_floor); changes no row records (ClearVectors, Reset, a model
// change) raise reset_gen. A copy older than either, or not loaded, is
// reloaded whole.
func (s *Store) refreshVectors(ctx context.Context) error {
	v := &s.vec
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var gen, resetGen, tombFloor int64
	var dim int
	var model string
	if err := tx.QueryRow(ctx, `SELECT generation, reset_gen, tomb_floor, dim, model FROM palace WHERE id = 1`).Scan(&gen, &resetGen, &tombFloor, &dim, &model); err != nil {
		return s.wrap(err)
	}
	switch {
	case v.loaded && v.gen == gen:
		// Another search refreshed it while this one waited for the lock.
		return nil
	case !v.loaded || v.gen < max(resetGen, tombFloor) || v.gen > gen || v.dim != dim:
		// v.gen > gen: the palace was made again (its generations restart).
		if err := s.loadVectors(ctx, tx, dim); err != nil {
			return err
		}
		v.fullLoads.Add(1)
	default:
		if err := s.applyDelta(ctx, tx, dim); err != nil {
			return err
		}
		v.deltas.Add(1)
	}
	v.gen, v.dim, v.model, v.loaded = gen, dim, model, true
	return nil
}

// applyDelta applies the changes since v.gen from tx's snapshot:
// tombstones first, then the changed rows, so that a drawer deleted and
// inserted again since ends up present and one deleted for good absent.
func (s *Store) applyDelta(ctx context.Context, tx pgx.Tx, dim int) error {
	v := &s.vec
	rows, err := tx.Query(ctx, `SELECT id FROM tombstones WHERE gen > $1`, v.gen)
	if err != nil {
		return s.wrap(err)
	}
	var gone []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return s.wrap(err)
		}
		gone = append(gone, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	for _, id := range gone {
		v.remove(id)
	}
	rows, err = tx.Query(ctx, `SELECT id, wing, room, agent, date, vec FROM drawers WHERE gen > $1`, v.gen)
	if err != nil {
		return s.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, wing, room, agent, date string
		var b []byte
		if err := rows.Scan(&id, &wing, &room, &agent, &date, &b); err != nil {
			return s.wrap(err)
		}
		if b == nil {
			v.remove(id) // no vector (yet, or any more): not searchable
			continue
		}
		if len(b) != 4*dim {
			return fmt.Errorf("drawer %q has a vector of %d bytes, the model's dimension is %d", id, len(b), dim)
		}
		i, ok := v.row[id]
		if !ok {
			v.row[id] = len(v.ids)
			v.ids = append(v.ids, id)
			v.wing, v.room, v.agent, v.date = append(v.wing, wing), append(v.room, room), append(v.agent, agent), append(v.date, date)
			v.vecs = appendVector(v.vecs, b)
			continue
		}
		v.wing[i], v.room[i], v.agent[i], v.date[i] = wing, room, agent, date
		decodeVector(v.vecs[i*dim:(i+1)*dim], b)
	}
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	return nil
}

// remove drops a drawer from the copy, if there, by moving the last row
// into its place: the vectors stay one contiguous slice.
func (v *vecCache) remove(id string) {
	i, ok := v.row[id]
	if !ok {
		return
	}
	delete(v.row, id)
	last := len(v.ids) - 1
	if i != last {
		v.ids[i], v.wing[i], v.room[i], v.agent[i], v.date[i] = v.ids[last], v.wing[last], v.room[last], v.agent[last], v.date[last]
		copy(v.vecs[i*v.dim:(i+1)*v.dim], v.vecs[last*v.dim:])
		v.row[v.ids[i]] = i
	}
	v.ids, v.wing, v.room, v.agent, v.date = v.ids[:last], v.wing[:last], v.room[:last], v.agent[:last], v.date[:last]
	v.vecs = v.vecs[:last*v.dim]
}

// loadVectors reads every vector from tx's snapshot; callers hold v.mu.
func (s *Store) loadVectors(ctx context.Context, tx pgx.Tx, dim int) error {
	v := &s.vec
	rows, err := tx.Query(ctx, `SELECT id, wing, room, agent, date, vec FROM drawers WHERE vec IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return s.wrap(err)
	}
	defer rows.Close()
	v.row = make(map[string]int, len(v.ids)) // sized for about as many as last time
	v.vecs, v.ids, v.wing, v.room, v.agent, v.date = v.vecs[:0], v.ids[:0], v.wing[:0], v.room[:0], v.agent[:0], v.date[:0]
	intern := map[string]string{}
	in := func(s string) string {
		if x, ok := intern[s]; ok {
			return x
		}
		intern[s] = s
		return s
	}
	for rows.Next() {
		var id, wing, room, agent, date string
		var b []byte
		if err := rows.Scan(&id, &wing, &room, &agent, &date, &b); err != nil {
			return s.wrap(err)
		}
		if len(b) != 4*dim {
			return fmt.Errorf("drawer %q has a vector of %d bytes, the model's dimension is %d", id, len(b), dim)
		}
		v.row[id] = len(v.ids)
		v.ids = append(v.ids, id)
		v.wing, v.room, v.agent, v.date = append(v.wing, in(wing)), append(v.room, in(room)), append(v.agent, in(agent)), append(v.date, date)
		v.vecs = appendVector(v.vecs, b)
	}
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	return nil
}
