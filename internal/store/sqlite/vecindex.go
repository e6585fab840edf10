package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sync"

	"github.com/hivemem/hivemem/internal/store/vecindex"
)

// vecIndex is the in-memory copy of every stored vector (a
// vecindex.Index), so that an exact scan never touches SQLite. It is
// loaded lazily, updated in place by this process's own writes, and
// reloaded when the palace generation shows another process wrote.
type vecIndex struct {
	mu     sync.RWMutex
	loaded bool
	gen    int64  // palace generation the contents reflect
	model  string // the palace's model at gen
	idx    *vecindex.Index
}

// vecRow is one drawer as the index sees it. vec is nil in a metadata-only
// change.
type vecRow = vecindex.Row

// vecDelta is what one committed write transaction did to the vectors (and
// to the full-text index), so the in-memory indexes can follow it without a
// reload.
type vecDelta struct {
	clear  bool     // every vector dropped (ClearVectors, Reset)
	dim    int      // new model dimension when > 0
	model  string   // with dim: the new model
	remove []string // drawers deleted
	upsert []vecRow // drawers that now have this vector
	meta   []vecRow // drawers whose metadata changed (only matter if cached)
	lex    lexDelta // what the write did to the full-text index
}

// invalidate forgets everything; the next search reloads.
func (v *vecIndex) invalidate() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
	v.idx = nil
}

// follow applies the delta of a write that moved the palace from generation
// oldGen to newGen. If the index reflects some other generation (another
// process wrote in between) it is dropped and reloaded on the next search;
// if it already reflects newGen (a search reloaded after the commit) there
// is nothing to do.
func (v *vecIndex) follow(oldGen, newGen int64, d vecDelta) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.loaded || v.gen == newGen {
		return
	}
	if v.gen != oldGen {
		v.loaded = false
		return
	}
	v.gen = newGen
	if d.clear {
		v.idx.Reset(v.idx.Dim(), 0)
	}
	if d.dim > 0 {
		// The model changes only while no vector is stored.
		if d.dim != v.idx.Dim() {
			v.idx.Reset(d.dim, 0)
		}
		v.model = d.model
	}
	for _, id := range d.remove {
		v.idx.Remove(id)
	}
	for _, r := range d.upsert {
		if err := v.idx.Put(r); err != nil {
			// Cannot happen: writes are checked against the model. Be safe.
			v.loaded = false
			return
		}
	}
	for _, r := range d.meta {
		v.idx.SetMeta(r.ID, r.Wing, r.Room, r.Agent, r.Date)
	}
}

// load reads every vector in one read transaction, so that the generation
// and the rows come from one snapshot. (Reading rowid ranges on several
// connections at once measured no faster on a busy 2-core machine, and
// needs the vectors twice in memory while they are joined.)
func (v *vecIndex) load(ctx context.Context, db *sql.DB) error {
	var n int
	if err := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // read-only
		n, err = countVectors(ctx, tx)
		return err
	}(); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	if err := v.loadRange(ctx, db, n, math.MinInt64, math.MaxInt64); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	v.loaded = true
	return nil
}

// loadRange reads the vectors of drawers with rowid in [from, to] in one
// read transaction into a fresh index. Raw bytes avoid a copy of every
// blob and string.
func (v *vecIndex) loadRange(ctx context.Context, db *sql.DB, sizeHint int, from, to int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	gen, err := readGeneration(ctx, tx)
	if err != nil {
		return err
	}
	model, dim, err := readModel(ctx, tx)
	if err != nil {
		return err
	}
	if v.idx == nil {
		v.idx = vecindex.New(dim, sizeHint)
	} else {
		v.idx.Reset(dim, sizeHint)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, wing, room, agent, date, vector FROM drawers
		WHERE vector IS NOT NULL AND rowid BETWEEN ? AND ? ORDER BY rowid`, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id, wing, room, agent, date, blob sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &wing, &room, &agent, &date, &blob); err != nil {
			return err
		}
		if err := v.idx.PutEncoded(string(id), string(wing), string(room), string(agent), string(date), blob); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	v.gen, v.model = gen, model
	return nil
}
