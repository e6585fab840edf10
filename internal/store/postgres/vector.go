package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlq"
	"github.com/hivemem/hivemem/internal/store/vecindex"
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
	if err := vecindex.CheckFinite(q); err != nil {
		return nil, fmt.Errorf("vector search: query %w", err)
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
	tx, dim, err := s.modelTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
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
	where, fargs := sqlq.Where(sqlq.Postgres, f, 2)
	// dim is our own integer: the index's expression needs it as a literal.
	dist := fmt.Sprintf(`d.embedding::vector(%d) <=> $1::vector(%d)`, dim, dim)
	sql := `SELECT d.id, 1 - (` + dist + `) FROM drawers d WHERE d.embedding IS NOT NULL` + where +
		` ORDER BY ` + dist + fmt.Sprintf(` LIMIT %d`, k)
	out, err := queryAll(ctx, tx, sqlq.Scored, sql, append([]any{pgvector.NewVector(q)}, fargs...)...)
	if err != nil {
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

// vecCache is the exact mode's in-memory copy of every vector (a
// vecindex.Index, shared with the SQLite backend). When the palace
// generation moved it is brought up to date incrementally (see
// refreshVectors), or reloaded whole.
type vecCache struct {
	mu     sync.RWMutex
	loaded bool
	gen    int64  // the palace generation the copy reflects
	model  string // the palace's model at gen
	idx    *vecindex.Index

	// How the copy was brought up to date, for tests and benchmarks.
	fullLoads, deltas atomic.Int64
}

func (v *vecCache) invalidate() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
	v.idx = nil
}

// dim is the dimension of the vectors in the copy (0 before a load).
func (v *vecCache) dim() int {
	if v.idx == nil {
		return 0
	}
	return v.idx.Dim()
}

// vectorScan answers from the in-memory copy after checking (one small
// query) that it reflects the current generation.
func (s *Store) vectorScan(ctx context.Context, q []float32, f store.Filter, k int) ([]store.Scored, error) {
	if err := s.readVectors(ctx); err != nil {
		return nil, err
	}
	defer s.vec.mu.RUnlock()
	return s.vec.idx.SearchQuery(q, f, k)
}

// readVectors read-locks the in-memory copy once it reflects the current
// generation (one small query says), and checks that this handle's model
// is still the vectors'; the caller read-unlocks it (s.vec.mu) unless it
// gets an error.
func (s *Store) readVectors(ctx context.Context) error {
	var gen int64
	if err := s.pool.QueryRow(ctx, `SELECT generation FROM palace WHERE id = 1`).Scan(&gen); err != nil {
		return s.wrap(err)
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
			return err
		}
		v.mu.Unlock()
		v.mu.RLock()
		// Between Unlock and RLock another search may have taken the
		// write lock and failed its refresh, leaving the copy half
		// applied (and loaded false, its dimension perhaps not its
		// vectors'): never scan that, refresh again.
		stale = !v.loaded
	}
	// Vectors of another model than the handle's would be compared
	// without meaning.
	if err := store.CheckModel(s.ownModel(), v.model); err != nil {
		v.mu.RUnlock()
		return err
	}
	return nil
}

// Vectors implements store.Store: from the in-memory copy in exact mode,
// from the table in pgvector mode (which keeps no copy).
func (s *Store) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !storable(id) })
	if s.mode == ModePGVector {
		out, err := s.vectorsSQL(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("read vectors: %w", err)
		}
		return out, nil
	}
	if err := s.readVectors(ctx); err != nil {
		return nil, fmt.Errorf("read vectors: %w", err)
	}
	defer s.vec.mu.RUnlock()
	return s.vec.idx.Vecs(ids), nil
}

// modelTx begins the read-only transaction of a read of vectors in SQL
// and reads the palace's model dimension in it, after checking that this
// handle's model is still the palace's: vectors of another model would
// be compared without meaning. The caller rolls tx back.
func (s *Store) modelTx(ctx context.Context) (tx pgx.Tx, dim int, err error) {
	tx, err = s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, s.wrap(err)
	}
	model, dim, err := readModel(ctx, tx)
	if err == nil {
		err = store.CheckModel(s.ownModel(), model)
	} else {
		err = s.wrap(err)
	}
	if err != nil {
		tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
		return nil, 0, err
	}
	return tx, dim, nil
}

// vectorsSQL reads the vectors of ids in one read-only transaction with
// the palace's model.
func (s *Store) vectorsSQL(ctx context.Context, ids []string) (map[string][]float32, error) {
	tx, _, err := s.modelTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	out := make(map[string][]float32, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `SELECT id, embedding FROM drawers WHERE id = ANY($1) AND embedding IS NOT NULL`, ids)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var v pgvector.Vector
		if err := rows.Scan(&id, &v); err != nil {
			return nil, s.wrap(err)
		}
		out[id] = v.Slice()
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	return out, nil
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
	case !v.loaded || v.gen < max(resetGen, tombFloor) || v.gen > gen || v.dim() != dim:
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
	v.gen, v.model, v.loaded = gen, model, true
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
		v.idx.Remove(id)
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
			v.idx.Remove(id) // no vector (yet, or any more): not searchable
			continue
		}
		if err := v.idx.PutEncoded(id, wing, room, agent, date, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	return nil
}

// loadVectors reads every vector from tx's snapshot; callers hold v.mu.
func (s *Store) loadVectors(ctx context.Context, tx pgx.Tx, dim int) error {
	v := &s.vec
	rows, err := tx.Query(ctx, `SELECT id, wing, room, agent, date, vec FROM drawers WHERE vec IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return s.wrap(err)
	}
	defer rows.Close()
	if v.idx == nil {
		v.idx = vecindex.New(dim, 0)
	} else {
		v.idx.Reset(dim, v.idx.Len()) // sized for about as many as last time
	}
	for rows.Next() {
		var id, wing, room, agent, date string
		var b []byte
		if err := rows.Scan(&id, &wing, &room, &agent, &date, &b); err != nil {
			return s.wrap(err)
		}
		if err := v.idx.PutEncoded(id, wing, room, agent, date, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	return nil
}
