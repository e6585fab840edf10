// Package sqlite is the embedded palace backend: one SQLite file in WAL mode
// (pure Go, modernc.org/sqlite), drawers with their vectors as compact
// float32 BLOBs, an FTS5 index for BM25, an in-memory copy of the vectors
// for exact similarity search, and (in long-running processes) an in-memory
// copy of the BM25 index.
//
// Writes go through one connection, serialised by a mutex in this process
// and by SQLite's write lock (BEGIN IMMEDIATE plus a busy timeout) between
// processes; reads use a separate pool and, thanks to WAL, never wait for a
// writer. Every write transaction bumps a generation counter in the meta
// table, which is how a process notices that another one changed the
// vectors it holds in memory.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlq"
	"github.com/hivemem/hivemem/internal/store/vecindex"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// BusyTimeout is how long a write waits for another process's write lock
// before giving up with an error.
const BusyTimeout = 10 * time.Second

// Store is the SQLite palace. It is safe for concurrent use.
type Store struct {
	path string
	wdb  *sql.DB // exactly one connection: every write goes here
	rdb  *sql.DB // read-only pool
	wmu  sync.Mutex
	vec  vecIndex
	tok  tokenizer // for Lexical's planning
	lex  lexStats
	lexi lexIndex  // in-memory BM25, for processes that opt in
	fw   fileWatch // the file the in-memory indexes come from (replaced.go)

	// model is this handle's embedding model (see store.Store's Model):
	// the palace's at Open, then what SetModel records. Writes of vectors
	// and vector searches check it against the palace's (store.CheckModel):
	// another process on this file may have switched models.
	model atomic.Pointer[string]

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed, parent directory included) the palace at
// path and brings its schema up to date. A palace written by a newer
// hivemem is refused.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite palace: empty path")
	}
	if strings.ContainsRune(path, 0) {
		return nil, errors.New("open sqlite palace: path contains a NUL byte")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, err)
	}
	common := fmt.Sprintf("_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1", BusyTimeout.Milliseconds())
	// SQLite decodes %HH in file: URIs; escaping %, ? and # keeps any path
	// from being read as URI syntax.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(abs)

	s := &Store{path: abs}
	// Immediate transactions take the write lock at BEGIN, so a busy writer
	// is waited for (busy_timeout) instead of failing at the first write
	// of a deferred transaction whose snapshot went stale.
	// 8 KiB pages hold three drawers with their 384-d vectors where 4 KiB
	// pages hold one (a third less file, faster scans); it only applies to
	// a new file. The writer's larger page cache keeps FTS5 segment merges
	// of bulk mining in memory.
	s.wdb, err = newFileDB(s, uri+"?"+common+"&_txlock=immediate&_pragma=page_size(8192)&_pragma=cache_size(-65536)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxIdleTime(0)

	if err := s.initWriter(ctx); err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, explainNoSpace(abs, err))
	}

	s.rdb, err = newFileDB(s, uri+"?"+common+"&_query_only=1")
	if err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxIdleTime(0)
	model, _, err := readModel(ctx, s.rdb)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite palace %s: %w", path, explainNoSpace(abs, err))
	}
	s.model.Store(&model)
	s.followFile()
	return s, nil
}

// ownModel is this handle's embedding model ("" when it never had one).
func (s *Store) ownModel() string {
	if m := s.model.Load(); m != nil {
		return *m
	}
	return ""
}

// initWriter checks that the file really is in WAL mode (it is not on some
// network file systems, and then concurrent readers would block writers)
// and runs the migrations.
func (s *Store) initWriter(ctx context.Context) error {
	var mode string
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not WAL (is the palace on a file system without shared memory?)", mode)
	}
	return migrate(ctx, s.wdb)
}

// Backend implements store.Store.
func (s *Store) Backend() string { return "sqlite" }

// Shared implements store.Writer: a SQLite palace lives in its home, so
// every file in it is the home's own.
func (s *Store) Shared() bool { return false }

// LockSource implements store.Writer. A palace that is not shared has no
// other home mining its files: there is nothing to hold off.
func (s *Store) LockSource(context.Context, string) (unlock func(), err error) {
	return func() {}, nil
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close implements store.Store; closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.lexi.Stop()
		errs := []error{s.tok.close()}
		if s.rdb != nil {
			errs = append(errs, s.rdb.Close())
		}
		if s.wdb != nil {
			errs = append(errs, s.wdb.Close())
		}
		s.vec.invalidate()
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("close sqlite palace %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func readGeneration(ctx context.Context, q querier) (int64, error) {
	var gen int64
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'generation'`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("read palace generation: %w", err)
	}
	return gen, nil
}

func readModel(ctx context.Context, q querier) (string, int, error) {
	var model string
	var dim int
	err := q.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'model'), (SELECT value FROM meta WHERE key = 'dim')`).Scan(&model, &dim)
	if err != nil {
		return "", 0, fmt.Errorf("read model: %w", err)
	}
	return model, dim, nil
}

// write runs fn in an immediate transaction on the writer connection, bumps
// the generation in the same transaction, commits, and then lets the
// in-memory vectors follow what fn reports it did.
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) (vecDelta, error)) error {
	return s.writeTx(ctx, what, true, fn)
}

// writeTx is write, with the generation bump optional for writes that touch
// neither drawers nor vectors (so other processes' caches stay valid).
func (s *Store) writeTx(ctx context.Context, what string, bump bool, fn func(tx *sql.Tx) (vecDelta, error)) error {
	s.followFile()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	d, err := fn(tx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !bump {
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("%s: commit: %w", what, err)
		}
		return nil
	}
	var gen int64
	if err := tx.QueryRowContext(ctx, `UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value`).Scan(&gen); err != nil {
		return fmt.Errorf("%s: bump generation: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	s.vec.follow(gen-1, gen, d)
	s.lexi.follow(&s.tok, gen-1, gen, d.lex)
	return nil
}

// Model implements store.Store.
func (s *Store) Model(ctx context.Context) (string, int, error) {
	return readModel(ctx, s.rdb)
}

// SetModel implements store.Store, and makes model this handle's.
func (s *Store) SetModel(ctx context.Context, model string, dim int) error {
	if model == "" || dim <= 0 {
		return fmt.Errorf("set model: need a model name and a positive dimension, got %q and %d", model, dim)
	}
	if old, oldDim, err := readModel(ctx, s.rdb); err == nil && old == model && oldDim == dim {
		// Recorded already (no write, so no generation for every other
		// process to follow); it is this handle's model now too.
		s.model.Store(&model)
		return nil
	}
	err := s.write(ctx, "set model", func(tx *sql.Tx) (vecDelta, error) {
		old, oldDim, err := readModel(ctx, tx)
		if err != nil {
			return vecDelta{}, err
		}
		if old != model || oldDim != dim {
			n, err := countVectors(ctx, tx)
			if err != nil {
				return vecDelta{}, err
			}
			if n > 0 {
				return vecDelta{}, fmt.Errorf("palace holds %d vectors of model %q (dimension %d): clear them before switching to %q (dimension %d)", n, old, oldDim, model, dim)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = CASE key WHEN 'model' THEN ?1 ELSE ?2 END WHERE key IN ('model', 'dim')`, model, dim); err != nil {
			return vecDelta{}, err
		}
		return vecDelta{dim: dim, model: model}, nil
	})
	if err != nil {
		return err
	}
	// The palace's model is now this handle's.
	s.model.Store(&model)
	return nil
}

func countVectors(ctx context.Context, q querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM drawers) - (SELECT count(*) FROM drawers WHERE vector IS NULL)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	return n, nil
}

// ClearVectors implements store.Store.
func (s *Store) ClearVectors(ctx context.Context) error {
	return s.write(ctx, "clear vectors", func(tx *sql.Tx) (vecDelta, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE drawers SET vector = NULL WHERE vector IS NOT NULL`); err != nil {
			return vecDelta{}, err
		}
		return vecDelta{clear: true}, nil
	})
}

// GetFile implements store.Store.
func (s *Store) GetFile(ctx context.Context, source string) (store.File, error) {
	files, err := s.queryFiles(ctx, `SELECT source, hash, size, mined_at, wing, agent, origin, room FROM files WHERE source = ?`, source)
	if err != nil {
		return store.File{}, fmt.Errorf("get file %q: %w", source, err)
	}
	if len(files) == 0 {
		return store.File{}, fmt.Errorf("get file %q: %w", source, store.ErrNotFound)
	}
	return files[0], nil
}

// Files implements store.Store. The prefix is compared byte for byte
// (LIKE would be case-insensitive and treat % and _ as wildcards).
func (s *Store) Files(ctx context.Context, prefix string) ([]store.File, error) {
	files, err := s.queryFiles(ctx, `SELECT source, hash, size, mined_at, wing, agent, origin, room FROM files
		WHERE substr(source, 1, length(?1)) = ?1 ORDER BY source`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list files %q: %w", prefix, err)
	}
	return files, nil
}

// queryFiles runs q for rows of the file columns and reads them.
func (s *Store) queryFiles(ctx context.Context, q string, args ...any) ([]store.File, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.File
	for rows.Next() {
		var f store.File
		var ns int64
		if err := rows.Scan(&f.Source, &f.Hash, &f.Size, &ns, &f.Wing, &f.Agent, &f.Origin, &f.Room); err != nil {
			return nil, err
		}
		f.MinedAt = fromNanos(ns)
		out = append(out, f)
	}
	return out, rows.Err()
}

// toNanos stores a time as unix nanoseconds; the zero time (and anything
// outside the int64 range) becomes 0, which reads back as the zero time.
func toNanos(t time.Time) int64 {
	if t.IsZero() || t.Year() < 1678 || t.Year() > 2261 {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

const drawerCols = `id, wing, room, agent, source, heading, line_start, line_end, date, hash, text, superseded_by`

// queryDrawers runs q for rows of drawerCols and reads them.
func (s *Store) queryDrawers(ctx context.Context, q string, args ...any) ([]store.Drawer, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlq.Drawers(rows)
}

// Drawers implements store.Store.
func (s *Store) Drawers(ctx context.Context, source string) ([]store.Drawer, error) {
	ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers WHERE source = ? ORDER BY line_start, rowid`, source)
	if err != nil {
		return nil, fmt.Errorf("list drawers of %q: %w", source, err)
	}
	return ds, nil
}

// DrawersOf implements store.Store.
func (s *Store) DrawersOf(ctx context.Context, sources []string) ([]store.Drawer, error) {
	var all []store.Drawer
	for _, batch := range store.SourceBatches(sources) {
		args := make([]any, len(batch))
		for i, src := range batch {
			args[i] = src
		}
		q := `SELECT ` + drawerCols + ` FROM drawers WHERE source IN (?` + strings.Repeat(", ?", len(batch)-1) + `) ORDER BY source, line_start, rowid`
		ds, err := s.queryDrawers(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("list drawers of %d sources: %w", len(sources), err)
		}
		all = append(all, ds...)
	}
	return all, nil
}

// vectorBlob encodes v after checking it against the recorded dimension;
// an empty vector is stored as NULL (not embedded yet).
func vectorBlob(v []float32, dim int) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	if err := vecindex.Check(v, dim); err != nil {
		return nil, err
	}
	return vecindex.Encode(v), nil
}

// Apply implements store.Store.
func (s *Store) Apply(ctx context.Context, u store.FileUpdate) error {
	src := u.File.Source
	if src == "" {
		return errors.New("apply: file update without a source")
	}
	ins := make([]store.Drawer, len(u.Insert))
	copy(ins, u.Insert)
	upd := make([]store.Drawer, len(u.Update))
	copy(upd, u.Update)
	for _, ds := range [][]store.Drawer{ins, upd} {
		for i := range ds {
			if err := store.CheckDrawer(&ds[i], src); err != nil {
				return fmt.Errorf("apply %q: %w", src, err)
			}
		}
	}
	return s.write(ctx, fmt.Sprintf("apply %q", src), func(tx *sql.Tx) (vecDelta, error) {
		var d vecDelta
		model, dim, err := readModel(ctx, tx)
		if err != nil {
			return d, err
		}
		if slices.ContainsFunc(ins, func(r store.Drawer) bool { return len(r.Vector) > 0 }) {
			// In the write transaction: no model change can come between.
			if err := store.CheckModel(s.ownModel(), model); err != nil {
				return d, err
			}
		}
		f := u.File
		if _, err := tx.ExecContext(ctx, `INSERT INTO files(source, hash, size, mined_at, wing, agent, origin, room) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(source) DO UPDATE SET hash = excluded.hash, size = excluded.size, mined_at = excluded.mined_at,
			wing = excluded.wing, agent = excluded.agent, origin = excluded.origin, room = excluded.room`, f.Source, f.Hash, f.Size, toNanos(f.MinedAt), f.Wing, f.Agent, f.Origin, f.Room); err != nil {
			return d, fmt.Errorf("write file record: %w", err)
		}
		if len(u.Delete) > 0 {
			del, err := tx.PrepareContext(ctx, `DELETE FROM drawers WHERE id = ?`)
			if err != nil {
				return d, err
			}
			defer del.Close()
			for _, id := range u.Delete {
				if _, err := del.ExecContext(ctx, id); err != nil {
					return d, fmt.Errorf("delete drawer %q: %w", id, err)
				}
			}
			d.remove = u.Delete
		}
		d.lex.remove = u.Delete
		if len(ins) > 0 {
			stmt, err := tx.PrepareContext(ctx, `INSERT INTO drawers(`+drawerCols+`, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(id) DO NOTHING`)
			if err != nil {
				return d, err
			}
			defer stmt.Close()
			for _, r := range ins {
				blob, err := vectorBlob(r.Vector, dim)
				if err != nil {
					return d, fmt.Errorf("drawer %q: %w", r.ID, err)
				}
				res, err := stmt.ExecContext(ctx, r.ID, r.Wing, r.Room, r.Agent, r.Source, r.Heading, r.LineStart, r.LineEnd, r.Date, r.Hash, r.Text, r.SupersededBy, blob)
				if err != nil {
					return d, fmt.Errorf("insert drawer %q: %w", r.ID, err)
				}
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					return d, fmt.Errorf("insert drawer %q: it already exists", r.ID)
				}
				if blob != nil {
					d.upsert = append(d.upsert, vecRow{ID: r.ID, Wing: r.Wing, Room: r.Room, Agent: r.Agent, Date: r.Date, Vec: r.Vector})
				}
			}
		}
		if len(upd) > 0 {
			stmt, err := tx.PrepareContext(ctx, `UPDATE drawers SET wing = ?, room = ?, agent = ?, source = ?, heading = ?,
				line_start = ?, line_end = ?, date = ?, superseded_by = ? WHERE id = ?`)
			if err != nil {
				return d, err
			}
			defer stmt.Close()
			for _, r := range upd {
				res, err := stmt.ExecContext(ctx, r.Wing, r.Room, r.Agent, r.Source, r.Heading, r.LineStart, r.LineEnd, r.Date, r.SupersededBy, r.ID)
				if err != nil {
					return d, fmt.Errorf("update drawer %q: %w", r.ID, err)
				}
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					return d, fmt.Errorf("update drawer %q: %w", r.ID, store.ErrNotFound)
				}
				d.meta = append(d.meta, vecRow{ID: r.ID, Wing: r.Wing, Room: r.Room, Agent: r.Agent, Date: r.Date})
			}
		}
		if !s.lexi.Enabled() {
			d.lex.missed = len(ins)+len(upd) > 0
		} else if len(ins)+len(upd) > 0 {
			// Read back what the index needs (rowids, the text of updated
			// drawers) only for a process that keeps one.
			var ids []string
			for _, ds := range [][]store.Drawer{ins, upd} {
				for _, r := range ds {
					ids = append(ids, r.ID)
				}
			}
			rows, err := lexRowsByID(ctx, tx, ids)
			if err != nil {
				return d, fmt.Errorf("read back drawers: %w", err)
			}
			for _, id := range ids {
				d.lex.add = append(d.lex.add, rows[id])
			}
		}
		return d, nil
	})
}

// DeleteFile implements store.Store.
func (s *Store) DeleteFile(ctx context.Context, source string) error {
	return s.write(ctx, fmt.Sprintf("delete file %q", source), func(tx *sql.Tx) (vecDelta, error) {
		var d vecDelta
		rows, err := tx.QueryContext(ctx, `DELETE FROM drawers WHERE source = ? RETURNING id`, source)
		if err != nil {
			return d, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return d, err
			}
			d.remove = append(d.remove, id)
		}
		d.lex.remove = d.remove
		if err := rows.Close(); err != nil {
			return d, err
		}
		if err := rows.Err(); err != nil {
			return d, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE source = ?`, source); err != nil {
			return d, err
		}
		return d, nil
	})
}

// MissingVectors implements store.Store.
func (s *Store) MissingVectors(ctx context.Context, limit int) ([]store.Drawer, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers WHERE vector IS NULL ORDER BY rowid LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list drawers without vectors: %w", err)
	}
	return ds, nil
}

// SetVectors implements store.Store.
func (s *Store) SetVectors(ctx context.Context, ids []string, vecs [][]float32) error {
	if err := store.CheckVectors(ids, vecs); err != nil {
		return fmt.Errorf("set vectors: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, "set vectors", func(tx *sql.Tx) (vecDelta, error) {
		var d vecDelta
		model, dim, err := readModel(ctx, tx)
		if err != nil {
			return d, err
		}
		// In the write transaction: no model change can come between.
		if err := store.CheckModel(s.ownModel(), model); err != nil {
			return d, err
		}
		stmt, err := tx.PrepareContext(ctx, `UPDATE drawers SET vector = ? WHERE id = ? RETURNING wing, room, agent, date`)
		if err != nil {
			return d, err
		}
		defer stmt.Close()
		for i, id := range ids {
			blob, err := vectorBlob(vecs[i], dim)
			if err != nil {
				return d, fmt.Errorf("drawer %q: %w", id, err)
			}
			r := vecRow{ID: id, Vec: vecs[i]}
			err = stmt.QueryRowContext(ctx, blob, id).Scan(&r.Wing, &r.Room, &r.Agent, &r.Date)
			if errors.Is(err, sql.ErrNoRows) {
				return d, fmt.Errorf("drawer %q: %w", id, store.ErrNotFound)
			}
			if err != nil {
				return d, fmt.Errorf("drawer %q: %w", id, err)
			}
			d.upsert = append(d.upsert, r)
		}
		return d, nil
	})
}

// maxParams bounds the ids bound into one IN (...) list.
const maxParams = 500

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, ids []string) ([]store.Drawer, error) {
	var all []store.Drawer
	for lo := 0; lo < len(ids); lo += maxParams {
		chunk := ids[lo:min(lo+maxParams, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := `SELECT ` + drawerCols + ` FROM drawers WHERE id IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
		ds, err := s.queryDrawers(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("get drawers: %w", err)
		}
		all = append(all, ds...)
	}
	return store.InOrder(ids, all), nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, f store.Filter, limit int) ([]store.Drawer, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list drawers: %w", err)
	}
	if limit <= 0 {
		limit = -1
	}
	where, args := sqlq.Where(sqlq.SQLite, f, 1)
	ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers d WHERE 1`+where+` ORDER BY source, line_start, rowid LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list drawers: %w", err)
	}
	return ds, nil
}

// Vector implements store.Store: an exact scan of the in-memory vectors,
// after checking (one small query) that no other process has written since
// they were loaded.
func (s *Store) Vector(ctx context.Context, q []float32, f store.Filter, k int) ([]store.Scored, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	if err := vecindex.CheckFinite(q); err != nil {
		return nil, fmt.Errorf("vector search: query %w", err)
	}
	if err := s.readVectors(ctx); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	defer s.vec.mu.RUnlock()
	res, err := s.vec.idx.SearchQuery(q, f, k)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return res, nil
}

// readVectors read-locks the in-memory vectors once they reflect what
// another process wrote up to now (one small query says), and checks that
// this handle's model is still theirs; the caller read-unlocks them
// (s.vec.mu) unless it gets an error.
func (s *Store) readVectors(ctx context.Context) error {
	s.followFile()
	gen, err := readGeneration(ctx, s.rdb)
	if err != nil {
		return err
	}
	s.vec.mu.RLock()
	// Only an older copy is reloaded: a newer one is this process's own
	// write that committed after gen was read, already followed. The
	// condition is checked again under the read lock each time: between
	// Unlock and RLock another search may have failed to load, or a write
	// found another process's write in between (loaded false for both).
	for !s.vec.loaded || s.vec.gen < gen {
		s.vec.mu.RUnlock()
		s.vec.mu.Lock()
		if !s.vec.loaded || s.vec.gen < gen {
			if err := s.vec.load(ctx, s.rdb); err != nil {
				s.vec.loaded = false
				s.vec.mu.Unlock()
				return err
			}
		}
		s.vec.mu.Unlock()
		s.vec.mu.RLock()
	}
	// Vectors of another model than the handle's would be compared
	// without meaning.
	if err := store.CheckModel(s.ownModel(), s.vec.model); err != nil {
		s.vec.mu.RUnlock()
		return err
	}
	return nil
}

// Vectors implements store.Store, from the in-memory vectors.
func (s *Store) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	if err := s.readVectors(ctx); err != nil {
		return nil, fmt.Errorf("read vectors: %w", err)
	}
	defer s.vec.mu.RUnlock()
	return s.vec.idx.Vecs(ids), nil
}

// CachedEmbeddings implements store.Store.
func (s *Store) CachedEmbeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := make(map[string][]float32)
	for lo := 0; lo < len(hashes); lo += maxParams {
		chunk := hashes[lo:min(lo+maxParams, len(hashes))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, model)
		for _, h := range chunk {
			args = append(args, h)
		}
		rows, err := s.rdb.QueryContext(ctx, `SELECT hash, vector FROM embed_cache WHERE model = ? AND hash IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read embedding cache: %w", err)
		}
		err = sqlq.Embeddings(rows, out)
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("read embedding cache: %w", err)
		}
	}
	return out, nil
}

// PutEmbeddings implements store.Store. Vectors for the palace's recorded
// model must have its dimension; within one call all vectors must agree.
func (s *Store) PutEmbeddings(ctx context.Context, model string, hashes []string, vecs [][]float32) error {
	if err := store.CheckEmbeddings(model, hashes, vecs); err != nil {
		return fmt.Errorf("put embeddings: %w", err)
	}
	if len(hashes) == 0 {
		return nil
	}
	return s.writeTx(ctx, "put embeddings", false, func(tx *sql.Tx) (vecDelta, error) {
		recorded, dim, err := readModel(ctx, tx)
		if err != nil {
			return vecDelta{}, err
		}
		if recorded != model {
			dim = len(vecs[0])
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO embed_cache(model, hash, vector) VALUES (?, ?, ?)
			ON CONFLICT(model, hash) DO UPDATE SET vector = excluded.vector`)
		if err != nil {
			return vecDelta{}, err
		}
		defer stmt.Close()
		for i, h := range hashes {
			blob, err := vectorBlob(vecs[i], dim)
			if err != nil {
				return vecDelta{}, fmt.Errorf("hash %q: %w", h, err)
			}
			if _, err := stmt.ExecContext(ctx, model, h, blob); err != nil {
				return vecDelta{}, fmt.Errorf("hash %q: %w", h, err)
			}
		}
		return vecDelta{}, nil
	})
}

// Stats implements store.Store.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{Backend: s.Backend(), VectorMode: "exact"}
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	var lastMine int64
	err = tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM drawers),
		(SELECT count(*) FROM drawers WHERE vector IS NULL), (SELECT coalesce(max(mined_at), 0) FROM files)`).
		Scan(&st.Files, &st.Drawers, &st.Vectors, &lastMine)
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	st.Vectors = st.Drawers - st.Vectors
	st.LastMine = fromNanos(lastMine)
	if st.Model, st.Dim, err = readModel(ctx, tx); err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT wing, count(*) FROM drawers GROUP BY wing ORDER BY wing`)
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var w store.WingStats
		if err := rows.Scan(&w.Wing, &w.Drawers); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
		st.Wings = append(st.Wings, w)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			st.SizeBytes += fi.Size()
		}
	}
	return st, nil
}

// Reset implements store.Store. The drawers go through the FTS delete
// trigger like any other delete, which keeps the index provably in step.
func (s *Store) Reset(ctx context.Context) error {
	return s.write(ctx, "reset", func(tx *sql.Tx) (vecDelta, error) {
		for _, q := range []string{
			`DELETE FROM drawers`,
			`DELETE FROM files`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return vecDelta{}, err
			}
		}
		return vecDelta{clear: true, lex: lexDelta{reset: true}}, nil
	})
}

// Check implements store.Store: SQLite's own integrity check, the foreign
// keys, the FTS index against the drawers table, and every vector's length
// against the model. All problems found are reported together.
func (s *Store) Check(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var problems []string
	rows, err := s.wdb.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return fmt.Errorf("check %s: %w", s.path, err)
		}
		if msg != "ok" {
			problems = append(problems, "integrity: "+msg)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	}

	rows, err = s.wdb.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	}
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fkid int
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			rows.Close()
			return fmt.Errorf("check %s: %w", s.path, err)
		}
		problems = append(problems, fmt.Sprintf("foreign key: %s row %d has no %s", table, rowid.Int64, parent))
	}
	rows.Close()

	// The FTS5 integrity check is spelled as an INSERT, hence the writer.
	if _, err := s.wdb.ExecContext(ctx, `INSERT INTO drawers_fts(drawers_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		problems = append(problems, "full-text index: "+err.Error())
	}

	_, dim, err := readModel(ctx, s.wdb)
	if err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	}
	var bad int
	var example sql.NullString
	if err := s.wdb.QueryRowContext(ctx, `SELECT count(*), min(id) FROM drawers WHERE vector IS NOT NULL AND length(vector) != ?`, dim*4).Scan(&bad, &example); err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	}
	if bad > 0 {
		problems = append(problems, fmt.Sprintf("vectors: %d drawers (e.g. %q) have a vector that is not %d float32s", bad, example.String, dim))
	}
	if len(problems) > 0 {
		return fmt.Errorf("check %s: %d problem(s):\n  %s", s.path, len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

// generation returns the palace's write counter (for tests and diagnostics).
func (s *Store) generation(ctx context.Context) (int64, error) {
	return readGeneration(ctx, s.rdb)
}
