// Package postgres is the shared palace backend: one PostgreSQL database
// that hivemem processes on several machines read and write at once.
//
// Layout. Drawers, files and the embedding cache are tables (schema.go);
// migrations are numbered and idempotent, run under an advisory lock, and a
// schema newer than the binary is refused.
//
// Full text. Text is tokenized in Go by internal/store/fts, the port of the
// SQLite palace's FTS5 tokenizer ('porter unicode61 remove_diacritics 2'),
// so both backends index the same tokens. Each drawer keeps a tsvector of
// its heading and text tokens (one position per lexeme, holding the token's
// BM25 frequency: 2 per heading hit plus 1 per text hit) under a GIN index,
// its FTS5 row size, and the palace keeps document frequencies (terms) and
// totals (palace.drawers, palace.tokens) in step inside every write
// transaction. Lexical computes FTS5's bm25 (k1 = 1.2, b = 0.75, FTS5's
// IDF with its clamp, heading weight 2, text 1, the scope column's 3 tokens
// counted in the row size) in SQL over the GIN matches, and plans the query
// as the SQLite backend does (terms no drawer holds are dropped, and terms
// in half the drawers or more when rarer ones remain; the drawers holding
// the rarest terms are tried alone first, kept when provably the exact top
// k: lexicalTier). Scores equal the
// SQLite backend's up to float rounding (the per-row sum runs in another
// order: relative differences around 1e-16), so rankings agree except
// between drawers whose scores tie to the last bits. Known differences:
// non-ASCII text is tokenized with Go's Unicode tables rather than SQLite's
// (see internal/store/fts); a query term the tokenizer splits into several
// tokens is searched as those tokens, not as a phrase; tokens of 2047 bytes
// or more are not indexed (a tsvector limit) and frequencies are capped at
// 16383 per drawer. A long-running process (WarmLexical) keeps an
// in-memory copy of the postings instead (internal/store/lexindex, shared
// with the SQLite backend; lexwarm.go), which ranks the same rows by the
// same formula without the per-row cost of SQL, and follows other
// processes' writes as the vector copy below does.
//
// Vectors. With the pgvector extension (created when the palace is made,
// if the server has it), vectors live in a vector column with an HNSW
// cosine index and Vector orders by <=> in SQL (iterative index scans, so
// filters do not starve the result; hnsw.ef_search is Options.EfSearch,
// 200 by default, raised to k). Without it they are little-endian float32
// BLOBs, and Vector scans an in-memory copy exactly, as the SQLite backend
// does. The copy follows every process's writes incrementally: each drawer
// row records the generation that last inserted or changed it (drawers.gen)
// and deletions leave tombstones, so the first search after a write fetches,
// in one snapshot, only the rows and tombstones newer than the copy. Writes
// that change every drawer at once (ClearVectors, Reset, a model change)
// set palace.reset_gen instead; tombstones are pruned tombHorizon
// generations on (palace.tomb_floor); a copy older than either reloads
// whole (refreshVectors). Stats reports which mode (VectorMode).
//
// Concurrency. Every write transaction first bumps the palace generation,
// which takes the palace row's lock: writes from all processes are
// serialised there, so they can neither deadlock nor interleave their
// document-frequency updates. LockSource (an advisory lock per source) lets
// the miner hold one file's read-diff-apply against other processes.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlq"
	"github.com/hivemem/hivemem/internal/store/vecindex"
)

// Options configures Open.
type Options struct {
	DSN string // a libpq connection string or postgres:// URL (pool_max_conns etc. honoured)
	// MaxConns caps the pool (0: the DSN's pool_max_conns, else pgx's
	// default). PGlite serves one connection: 1 works.
	MaxConns int
	// StatementTimeout bounds every statement on the server (0: 30 s,
	// negative: none), unless the DSN sets statement_timeout itself.
	StatementTimeout time.Duration
	// VectorMode for a new palace: "auto" (default: pgvector when the
	// server has it), "exact" or "pgvector". An existing palace keeps its own.
	VectorMode string
	// EfSearch is pgvector's hnsw.ef_search for Vector: candidates the
	// HNSW walk keeps, so recall against exact search grows with it and so
	// does latency (see TestHNSWRecall). It is raised to k when k is larger
	// (HNSW returns at most ef_search rows). 0 means DefaultEfSearch.
	EfSearch int
}

// DefaultEfSearch is hnsw.ef_search when Options.EfSearch is 0.
const DefaultEfSearch = 200

// DefaultStatementTimeout is used when Options.StatementTimeout is 0.
const DefaultStatementTimeout = 30 * time.Second

// Store is the PostgreSQL palace. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	target string // user@host:port/database, for messages (never the password)
	mode   string
	from   int // schema version found at open
	ef     int // hnsw.ef_search floor (pgvector mode)

	vec  vecCache // exact mode only
	lexw lexWarm  // only in processes that call WarmLexical
	// Tombstones older than tombHorizon generations are pruned by every
	// pruneEvery-th write (fields rather than constants so that tests can
	// make them small).
	tombHorizon, pruneEvery int64

	iterOnce sync.Once // pgvector's iterative scans, probed once
	iter     bool

	locks sync.Map // source -> *sync.Mutex, in-process half of LockSource

	// model is this handle's embedding model (see store.Store's Model):
	// the palace's at Open, then what SetModel records. Writes of vectors
	// and vector searches check it against the palace's (store.CheckModel).
	model atomic.Pointer[string]

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open connects, checks the server and brings the schema up to date.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.DSN == "" {
		return nil, errors.New("open postgres palace: no DSN (set palace.dsn or HIVEMEM_DSN)")
	}
	if opts.EfSearch < 0 || opts.EfSearch > maxEfSearch {
		return nil, fmt.Errorf("open postgres palace: hnsw ef_search must be between 1 and %d (0: default %d), got %d", maxEfSearch, DefaultEfSearch, opts.EfSearch)
	}
	cfg, err := pgxpool.ParseConfig(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("open postgres palace: bad DSN: %w", redactErr(err, opts.DSN))
	}
	cc := cfg.ConnConfig
	target := fmt.Sprintf("%s@%s:%d/%s", cc.User, cc.Host, cc.Port, cc.Database)
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(opts.MaxConns)
	}
	if _, ok := cc.RuntimeParams["statement_timeout"]; !ok && opts.StatementTimeout >= 0 {
		t := opts.StatementTimeout
		if t == 0 {
			t = DefaultStatementTimeout
		}
		// The server counts whole milliseconds and takes 0 as no limit:
		// round up, so that any positive timeout stays a limit.
		ms := t.Milliseconds()
		if time.Duration(ms)*time.Millisecond < t {
			ms++
		}
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(ms, 10)
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		cc.RuntimeParams["application_name"] = "hivemem"
	}
	if sp, ok := cc.RuntimeParams["search_path"]; ok {
		// Also set it explicitly: PGlite ignores startup parameters.
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, `SELECT set_config('search_path', $1::text, false)`, sp)
			return err
		}
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres palace %s: %w", target, err)
	}
	s := &Store{pool: pool, target: target, ef: cmp.Or(opts.EfSearch, DefaultEfSearch), tombHorizon: tombHorizon, pruneEvery: pruneEvery}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, connectError(target, err)
	}
	mode, from, err := migrate(ctx, conn.Conn(), cmp.Or(opts.VectorMode, "auto"))
	var model string
	if err == nil {
		model, _, err = readModel(ctx, conn.Conn())
	}
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres palace %s: %w", target, err)
	}
	s.mode, s.from = mode, from
	s.model.Store(&model)
	return s, nil
}

// ownModel is this handle's embedding model ("" when it never had one).
func (s *Store) ownModel() string {
	if m := s.model.Load(); m != nil {
		return *m
	}
	return ""
}

// Backend implements store.Store.
func (s *Store) Backend() string { return "postgres" }

// VectorMode is ModeExact or ModePGVector.
func (s *Store) VectorMode() string { return s.mode }

// Target names the server and database (user@host:port/db), for messages.
func (s *Store) Target() string { return s.target }

// Migrated reports the schema version found at open and the one now.
func (s *Store) Migrated() (from, to int) { return s.from, SchemaVersion }

// Close implements store.Store; closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.lexw.Stop() // before the pool closes under a build
		s.pool.Close()
		s.vec.invalidate()
	})
	return nil
}

// vcol is the column holding vectors in this palace's mode.
func (s *Store) vcol() string {
	if s.mode == ModePGVector {
		return "embedding"
	}
	return "vec"
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryAll runs sql on db and reads every row with read.
func queryAll[T any](ctx context.Context, db querier, read func(sqlq.Rows) ([]T, error), sql string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return read(rows)
}

func readModel(ctx context.Context, q querier) (string, int, error) {
	var model string
	var dim int
	if err := q.QueryRow(ctx, `SELECT model, dim FROM palace WHERE id = 1`).Scan(&model, &dim); err != nil {
		return "", 0, fmt.Errorf("read model: %w", err)
	}
	return model, dim, nil
}

// Tombstone pruning defaults: a vector cache that missed more than
// tombHorizon writes reloads everything (about what fetching that many
// writes' changes would cost anyway); the prune runs on one write in
// pruneEvery, so the others pay nothing for it.
const (
	tombHorizon = 10000
	pruneEvery  = 100
)

// write runs fn in a transaction that first bumps the palace generation
// (taking the palace row's lock: writers are serialised, and commit in
// generation order) and passes fn the model dimension and the new
// generation, which every drawer row fn inserts, updates or deletes must
// record (drawers.gen, tombstones) for the vector caches and warm lexical
// indexes to follow.
func (s *Store) write(ctx context.Context, what string, fn func(tx pgx.Tx, dim int, gen int64) error) error {
	return s.writeTx(ctx, what, false, fn)
}

// writeVectors is write for a write that stores vectors: it fails with
// store.ErrModelChanged unless the palace's model is this handle's,
// checked under the palace row's lock, so that no model change can come
// between the check and the commit.
func (s *Store) writeVectors(ctx context.Context, what string, fn func(tx pgx.Tx, dim int, gen int64) error) error {
	return s.writeTx(ctx, what, true, fn)
}

func (s *Store) writeTx(ctx context.Context, what string, vectors bool, fn func(tx pgx.Tx, dim int, gen int64) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	var model string
	var dim int
	var gen int64
	if err := tx.QueryRow(ctx, `UPDATE palace SET generation = generation + 1 WHERE id = 1 RETURNING model, dim, generation`).Scan(&model, &dim, &gen); err != nil {
		return fmt.Errorf("%s: bump generation: %w", what, s.wrap(err))
	}
	if vectors {
		if err := store.CheckModel(s.ownModel(), model); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := fn(tx, dim, gen); err != nil {
		return fmt.Errorf("%s: %w", what, s.wrap(err))
	}
	if gen%s.pruneEvery == 0 && gen > s.tombHorizon {
		// In the same transaction as the floor, so that no reader sees
		// tombstones gone without the floor that says so.
		floor := gen - s.tombHorizon
		if _, err := tx.Exec(ctx, `DELETE FROM tombstones WHERE gen <= $1`, floor); err != nil {
			return fmt.Errorf("%s: prune tombstones: %w", what, s.wrap(err))
		}
		if _, err := tx.Exec(ctx, `UPDATE palace SET tomb_floor = greatest(tomb_floor, $1) WHERE id = 1`, floor); err != nil {
			return fmt.Errorf("%s: prune tombstones: %w", what, s.wrap(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: commit: %w", what, s.wrap(err))
	}
	return nil
}

// Model implements store.Store.
func (s *Store) Model(ctx context.Context) (string, int, error) {
	m, d, err := readModel(ctx, s.pool)
	return m, d, s.wrap(err)
}

// SetModel implements store.Store, and makes model this handle's. In
// pgvector mode a change of dimension also rebuilds the (then empty) HNSW
// index for the new one.
func (s *Store) SetModel(ctx context.Context, model string, dim int) error {
	if model == "" || dim <= 0 {
		return fmt.Errorf("set model: need a model name and a positive dimension, got %q and %d", model, dim)
	}
	if s.mode == ModePGVector && dim > 2000 {
		return fmt.Errorf("set model: pgvector's HNSW index takes at most 2000 dimensions, the model has %d", dim)
	}
	if old, oldDim, err := readModel(ctx, s.pool); err == nil && old == model && oldDim == dim {
		// Recorded already (no write, so no generation for every other
		// process to follow); it is this handle's model now too.
		s.model.Store(&model)
		return nil
	}
	err := s.write(ctx, "set model", func(tx pgx.Tx, oldDim int, gen int64) error {
		old, _, err := readModel(ctx, tx)
		if err != nil {
			return err
		}
		if old == model && oldDim == dim {
			return nil
		}
		n, err := countVectors(ctx, tx, s.vcol())
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("palace holds %d vectors of model %q (dimension %d): clear them before switching to %q (dimension %d)", n, old, oldDim, model, dim)
		}
		// reset_gen: vector caches reload, taking the new dimension.
		if _, err := tx.Exec(ctx, `UPDATE palace SET model = $1, dim = $2, reset_gen = $3 WHERE id = 1`, model, dim, gen); err != nil {
			return err
		}
		if s.mode == ModePGVector && oldDim != dim {
			// Qualified: unqualified, DROP INDEX would look through the
			// whole search path and could drop another schema's palace's.
			var schema string
			if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+pgx.Identifier{schema, "drawers_embedding_hnsw"}.Sanitize()); err != nil {
				return err
			}
			// dim is our own validated integer: the cast needs a literal.
			q := fmt.Sprintf(`CREATE INDEX drawers_embedding_hnsw ON drawers USING hnsw ((embedding::vector(%d)) vector_cosine_ops)`, dim)
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("create the HNSW index: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The palace's model is now this handle's.
	s.model.Store(&model)
	return nil
}

func countVectors(ctx context.Context, q querier, col string) (int, error) {
	var n int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM drawers WHERE `+col+` IS NOT NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	return n, nil
}

// ClearVectors implements store.Store.
func (s *Store) ClearVectors(ctx context.Context) error {
	return s.write(ctx, "clear vectors", func(tx pgx.Tx, _ int, gen int64) error {
		// Rather than stamping every row with gen (and having caches fetch
		// them all), reset_gen makes older caches reload: same cost, no
		// write amplification.
		if _, err := tx.Exec(ctx, `UPDATE drawers SET `+s.vcol()+` = NULL WHERE `+s.vcol()+` IS NOT NULL`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE palace SET reset_gen = $1 WHERE id = 1`, gen)
		return err
	})
}

const fileCols = `source, hash, size, mined_at, wing, agent, origin, room`

// queryFiles runs q for rows of fileCols and reads them.
func (s *Store) queryFiles(ctx context.Context, q string, args ...any) ([]store.File, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []store.File
	for rows.Next() {
		var f store.File
		var at *time.Time
		if err := rows.Scan(&f.Source, &f.Hash, &f.Size, &at, &f.Wing, &f.Agent, &f.Origin, &f.Room); err != nil {
			return nil, err
		}
		if at != nil {
			f.MinedAt = at.UTC()
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	return out, nil
}

// GetFile implements store.Store.
func (s *Store) GetFile(ctx context.Context, source string) (store.File, error) {
	if !storable(source) {
		return store.File{}, fmt.Errorf("get file %q: %w", source, store.ErrNotFound)
	}
	files, err := s.queryFiles(ctx, `SELECT `+fileCols+` FROM files WHERE source = $1`, source)
	if err != nil {
		return store.File{}, fmt.Errorf("get file %q: %w", source, err)
	}
	if len(files) == 0 {
		return store.File{}, fmt.Errorf("get file %q: %w", source, store.ErrNotFound)
	}
	return files[0], nil
}

// Files implements store.Store; the prefix is compared character for
// character (no LIKE wildcards, no case folding).
func (s *Store) Files(ctx context.Context, prefix string) ([]store.File, error) {
	if !storable(prefix) {
		return nil, nil
	}
	files, err := s.queryFiles(ctx, `SELECT `+fileCols+` FROM files WHERE left(source, length($1)) = $1 ORDER BY source COLLATE "C"`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list files %q: %w", prefix, err)
	}
	return files, nil
}

const drawerCols = `d.id, d.wing, d.room, d.agent, d.source, d.heading, d.line_start, d.line_end, d.date, d.hash, d.text, d.superseded_by`

// queryDrawers runs q for rows of drawerCols and reads them.
func (s *Store) queryDrawers(ctx context.Context, q string, args ...any) ([]store.Drawer, error) {
	ds, err := queryAll(ctx, s.pool, sqlq.Drawers, q, args...)
	return ds, s.wrap(err)
}

// Drawers implements store.Store.
func (s *Store) Drawers(ctx context.Context, source string) ([]store.Drawer, error) {
	if !storable(source) {
		return nil, nil
	}
	ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers d WHERE d.source = $1 ORDER BY d.line_start, d.rowid`, source)
	if err != nil {
		return nil, fmt.Errorf("list drawers of %q: %w", source, err)
	}
	return ds, nil
}

// DrawersOf implements store.Store; a source PostgreSQL could not store
// has no drawers and is not sent.
func (s *Store) DrawersOf(ctx context.Context, sources []string) ([]store.Drawer, error) {
	var all []store.Drawer
	for _, batch := range store.SourceBatches(slices.DeleteFunc(slices.Clone(sources), func(src string) bool { return !storable(src) })) {
		ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers d WHERE d.source = ANY($1) ORDER BY d.source COLLATE "C", d.line_start, d.rowid`, batch)
		if err != nil {
			return nil, fmt.Errorf("list drawers of %d sources: %w", len(sources), err)
		}
		all = append(all, ds...)
	}
	return all, nil
}

// checkDrawer is store.CheckDrawer, and refuses text PostgreSQL cannot
// store.
func checkDrawer(d *store.Drawer, source string) error {
	if err := store.CheckDrawer(d, source); err != nil {
		return err
	}
	if err := checkText("id", d.ID, "wing", d.Wing, "room", d.Room, "agent", d.Agent, "heading", d.Heading, "hash", d.Hash, "text", d.Text); err != nil {
		return fmt.Errorf("drawer %q: %w", d.ID, err)
	}
	return nil
}

// Apply implements store.Store.
func (s *Store) Apply(ctx context.Context, u store.FileUpdate) error {
	src := u.File.Source
	if src == "" {
		return errors.New("apply: file update without a source")
	}
	f := u.File
	if err := checkText("source", f.Source, "hash", f.Hash, "wing", f.Wing, "agent", f.Agent, "origin", f.Origin, "room", f.Room); err != nil {
		return fmt.Errorf("apply %q: %w", src, err)
	}
	// An id PostgreSQL cannot store names no drawer: nothing to delete.
	del := slices.DeleteFunc(slices.Clone(u.Delete), func(id string) bool { return !storable(id) })
	ins := slices.Clone(u.Insert)
	upd := slices.Clone(u.Update)
	for _, ds := range [][]store.Drawer{ins, upd} {
		for i := range ds {
			if err := checkDrawer(&ds[i], src); err != nil {
				return fmt.Errorf("apply %q: %w", src, err)
			}
		}
	}
	// Tokenizing is the expensive part: done before the transaction.
	insIdx := make([]indexed, len(ins))
	for i, d := range ins {
		insIdx[i] = index(d.Heading, d.Text)
	}
	write := s.write
	if slices.ContainsFunc(ins, func(d store.Drawer) bool { return len(d.Vector) > 0 }) {
		write = s.writeVectors
	}
	return write(ctx, fmt.Sprintf("apply %q", src), func(tx pgx.Tx, dim int, gen int64) error {
		for _, d := range ins {
			if len(d.Vector) > 0 {
				if err := vecindex.Check(d.Vector, dim); err != nil {
					return fmt.Errorf("drawer %q: %w", d.ID, err)
				}
			}
		}
		var at *time.Time
		if !f.MinedAt.IsZero() {
			t := f.MinedAt.UTC()
			at = &t
		}
		if _, err := tx.Exec(ctx, `INSERT INTO files(`+fileCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (source) DO UPDATE SET hash = excluded.hash, size = excluded.size, mined_at = excluded.mined_at,
			wing = excluded.wing, agent = excluded.agent, origin = excluded.origin, room = excluded.room`, f.Source, f.Hash, f.Size, at, f.Wing, f.Agent, f.Origin, f.Room); err != nil {
			return fmt.Errorf("write file record: %w", err)
		}
		var delta statsDelta
		if len(del) > 0 {
			if err := s.deleteDrawers(ctx, tx, gen, `id = ANY($1)`, []any{del}, &delta); err != nil {
				return err
			}
		}
		if len(ins) > 0 {
			if err := s.insertDrawers(ctx, tx, gen, ins, insIdx, &delta); err != nil {
				return err
			}
		}
		if len(upd) > 0 {
			if err := updateDrawers(ctx, tx, gen, upd, &delta); err != nil {
				return err
			}
		}
		return delta.apply(ctx, tx)
	})
}

// insertBatch bounds the rows of one INSERT (the parameter count stays far
// below PostgreSQL's 65535, and PGlite gets no COPY).
const insertBatch = 500

func (s *Store) insertDrawers(ctx context.Context, tx pgx.Tx, gen int64, ds []store.Drawer, idx []indexed, delta *statsDelta) error {
	all := make([]string, len(ds))
	seen := make(map[string]bool, len(ds))
	for i, d := range ds {
		if seen[d.ID] {
			return fmt.Errorf("insert drawer %q: it is given twice", d.ID)
		}
		seen[d.ID] = true
		all[i] = d.ID
	}
	// Writers are serialised (see write), so nothing can insert one of
	// these ids between this check and the insert.
	var dup *string
	if err := tx.QueryRow(ctx, `SELECT min(id) FROM drawers WHERE id = ANY($1)`, all).Scan(&dup); err != nil {
		return fmt.Errorf("insert drawers: %w", err)
	}
	if dup != nil {
		return fmt.Errorf("insert drawer %q: it already exists", *dup)
	}
	for lo := 0; lo < len(ds); lo += insertBatch {
		hi := min(lo+insertBatch, len(ds))
		n := hi - lo
		ids, wings, rooms, agents, sources, headings := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		starts, ends := make([]int32, n), make([]int32, n)
		dates, hashes, texts, tsvs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		sizes := make([]int32, n)
		supers := make([]string, n)
		vecText := make([]*string, n)
		vecBlob := make([][]byte, n)
		for i, d := range ds[lo:hi] {
			x := idx[lo+i]
			ids[i], wings[i], rooms[i], agents[i], sources[i], headings[i] = d.ID, d.Wing, d.Room, d.Agent, d.Source, d.Heading
			starts[i], ends[i] = int32(d.LineStart), int32(d.LineEnd)
			dates[i], hashes[i], texts[i], tsvs[i], sizes[i] = d.Date, d.Hash, d.Text, x.tsv, int32(x.size)
			supers[i] = d.SupersededBy
			if len(d.Vector) > 0 {
				if s.mode == ModePGVector {
					t := pgvector.NewVector(d.Vector).String()
					vecText[i] = &t
				} else {
					vecBlob[i] = vecindex.Encode(d.Vector)
				}
			}
			delta.drawers++
			delta.tokens += int64(x.size)
			delta.add(x.terms, 1)
		}
		var vecParam any = vecBlob
		vecType, vecExpr := "bytea[]", "u.v"
		if s.mode == ModePGVector {
			vecParam, vecType, vecExpr = vecText, "text[]", "u.v::vector"
		}
		_, err := tx.Exec(ctx, `INSERT INTO drawers(id, wing, room, agent, source, heading, line_start, line_end, date, hash, text, tsv, size, `+s.vcol()+`, gen, superseded_by)
			SELECT u.id, u.wing, u.room, u.agent, u.source, u.heading, u.ls, u.le, u.date, u.hash, u.text, u.tsv::tsvector, u.size, `+vecExpr+`, $15, u.sup
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
				$9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::`+vecType+`, $16::text[])
				AS u(id, wing, room, agent, source, heading, ls, le, date, hash, text, tsv, size, v, sup)`,
			ids, wings, rooms, agents, sources, headings, starts, ends, dates, hashes, texts, tsvs, sizes, vecParam, gen, supers)
		if err != nil {
			return fmt.Errorf("insert drawers: %w", err)
		}
	}
	return nil
}

// deleteDrawers deletes the drawers matching where, counts what they took
// out of the full-text statistics and leaves a tombstone at gen for each
// so that other processes' vector caches (exact mode) and warm lexical
// indexes (either mode) drop them.
func (s *Store) deleteDrawers(ctx context.Context, tx pgx.Tx, gen int64, where string, args []any, delta *statsDelta) error {
	// ON CONFLICT: should one write ever delete an id twice (delete,
	// re-insert, delete), one tombstone says it all.
	q := fmt.Sprintf(`WITH d AS (DELETE FROM drawers WHERE %s RETURNING id, size, tsv),
		t AS (INSERT INTO tombstones(gen, id) SELECT $%d, id FROM d ON CONFLICT DO NOTHING)
		SELECT size, tsvector_to_array(tsv) FROM d`, where, len(args)+1)
	args = append(slices.Clip(args), gen)
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("delete drawers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var size int32
		var terms []string
		if err := rows.Scan(&size, &terms); err != nil {
			return fmt.Errorf("delete drawers: %w", err)
		}
		delta.drawers--
		delta.tokens -= int64(size)
		delta.add(terms, -1)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("delete drawers: %w", err)
	}
	return nil
}

// updateDrawers rewrites metadata (stamping gen: wing, room, agent and date
// are in the vector caches); a changed heading re-indexes the drawer.
func updateDrawers(ctx context.Context, tx pgx.Tx, gen int64, ds []store.Drawer, delta *statsDelta) error {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	rows, err := tx.Query(ctx, `SELECT id, heading, text, size, tsvector_to_array(tsv) FROM drawers WHERE id = ANY($1) FOR UPDATE`, ids)
	if err != nil {
		return fmt.Errorf("update drawers: %w", err)
	}
	type old struct {
		heading, text string
		size          int32
		terms         []string
	}
	have := make(map[string]old, len(ds))
	for rows.Next() {
		var id string
		var o old
		if err := rows.Scan(&id, &o.heading, &o.text, &o.size, &o.terms); err != nil {
			rows.Close()
			return fmt.Errorf("update drawers: %w", err)
		}
		have[id] = o
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("update drawers: %w", err)
	}
	batch := &pgx.Batch{}
	for _, d := range ds {
		o, ok := have[d.ID]
		if !ok {
			return fmt.Errorf("update drawer %q: %w", d.ID, store.ErrNotFound)
		}
		if o.heading == d.Heading {
			batch.Queue(`UPDATE drawers SET wing = $1, room = $2, agent = $3, source = $4, line_start = $5, line_end = $6, date = $7, gen = $8, superseded_by = $10 WHERE id = $9`,
				d.Wing, d.Room, d.Agent, d.Source, d.LineStart, d.LineEnd, d.Date, gen, d.ID, d.SupersededBy)
			continue
		}
		x := index(d.Heading, o.text)
		delta.tokens += int64(x.size) - int64(o.size)
		delta.add(o.terms, -1)
		delta.add(x.terms, 1)
		batch.Queue(`UPDATE drawers SET wing = $1, room = $2, agent = $3, source = $4, line_start = $5, line_end = $6, date = $7,
			heading = $8, tsv = $9::tsvector, size = $10, gen = $11, superseded_by = $13 WHERE id = $12`,
			d.Wing, d.Room, d.Agent, d.Source, d.LineStart, d.LineEnd, d.Date, d.Heading, x.tsv, x.size, gen, d.ID, d.SupersededBy)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("update drawers: %w", err)
	}
	return nil
}

// DeleteFile implements store.Store.
func (s *Store) DeleteFile(ctx context.Context, source string) error {
	if !storable(source) {
		return nil
	}
	return s.write(ctx, fmt.Sprintf("delete file %q", source), func(tx pgx.Tx, _ int, gen int64) error {
		var delta statsDelta
		if err := s.deleteDrawers(ctx, tx, gen, `source = $1`, []any{source}, &delta); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM files WHERE source = $1`, source); err != nil {
			return err
		}
		return delta.apply(ctx, tx)
	})
}

// MissingVectors implements store.Store.
func (s *Store) MissingVectors(ctx context.Context, limit int) ([]store.Drawer, error) {
	q := `SELECT ` + drawerCols + ` FROM drawers d WHERE d.` + s.vcol() + ` IS NULL ORDER BY d.rowid`
	args := []any{}
	if limit > 0 {
		q += ` LIMIT $1`
		args = append(args, limit)
	}
	ds, err := s.queryDrawers(ctx, q, args...)
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
	return s.writeVectors(ctx, "set vectors", func(tx pgx.Tx, dim int, gen int64) error {
		for i, id := range ids {
			if err := vecindex.Check(vecs[i], dim); err != nil {
				return fmt.Errorf("drawer %q: %w", id, err)
			}
		}
		for lo := 0; lo < len(ids); lo += insertBatch {
			hi := min(lo+insertBatch, len(ids))
			var q string
			var vp any
			if s.mode == ModePGVector {
				vs := make([]string, hi-lo)
				for i := range vs {
					vs[i] = pgvector.NewVector(vecs[lo+i]).String()
				}
				q, vp = `UPDATE drawers d SET embedding = u.v::vector, gen = $3 FROM unnest($1::text[], $2::text[]) u(id, v) WHERE d.id = u.id RETURNING d.id`, vs
			} else {
				vs := make([][]byte, hi-lo)
				for i := range vs {
					vs[i] = vecindex.Encode(vecs[lo+i])
				}
				q, vp = `UPDATE drawers d SET vec = u.v, gen = $3 FROM unnest($1::text[], $2::bytea[]) u(id, v) WHERE d.id = u.id RETURNING d.id`, vs
			}
			rows, err := tx.Query(ctx, q, ids[lo:hi], vp, gen)
			if err != nil {
				return err
			}
			done := make(map[string]bool, hi-lo)
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				done[id] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, id := range ids[lo:hi] {
				if !done[id] {
					return fmt.Errorf("drawer %q: %w", id, store.ErrNotFound)
				}
			}
		}
		return nil
	})
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, ids []string) ([]store.Drawer, error) {
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !storable(id) })
	if len(ids) == 0 {
		return nil, nil
	}
	ds, err := s.queryDrawers(ctx, `SELECT `+drawerCols+` FROM drawers d WHERE d.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("get drawers: %w", err)
	}
	return store.InOrder(ids, ds), nil
}

// storable reports whether PostgreSQL can hold s as text: valid UTF-8
// without NUL. Every stored value is (Apply refuses others), so a key or
// filter value that is not matches nothing, as on SQLite, and is answered
// without sending it (the server would refuse it: SQLSTATE 22021).
func storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// filterStorable reports whether every value of f is storable; a filter
// with one that is not matches no drawer.
func filterStorable(f store.Filter) bool {
	return storable(f.Wing) && storable(f.Room) && storable(f.Agent)
}

// checkText refuses the text of a record that PostgreSQL cannot store,
// with a clear error rather than the server's.
func checkText(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if v := fields[i+1]; !storable(v) {
			return fmt.Errorf("%s %q is not valid UTF-8 text without NUL bytes: PostgreSQL cannot store it", fields[i], v)
		}
	}
	return nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, f store.Filter, limit int) ([]store.Drawer, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list drawers: %w", err)
	}
	if !filterStorable(f) {
		return nil, nil
	}
	where, args := sqlq.Where(sqlq.Postgres, f, 1)
	q := `SELECT ` + drawerCols + ` FROM drawers d WHERE true` + where + ` ORDER BY d.source COLLATE "C", d.line_start, d.rowid`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	ds, err := s.queryDrawers(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list drawers: %w", err)
	}
	return ds, nil
}

// CachedEmbeddings implements store.Store.
func (s *Store) CachedEmbeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := make(map[string][]float32)
	if len(hashes) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT hash, vector FROM embed_cache WHERE model = $1 AND hash = ANY($2)`, model, hashes)
	if err != nil {
		return nil, fmt.Errorf("read embedding cache: %w", s.wrap(err))
	}
	defer rows.Close()
	if err := sqlq.Embeddings(rows, out); err != nil {
		return nil, fmt.Errorf("read embedding cache: %w", s.wrap(err))
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
	recorded, dim, err := readModel(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("put embeddings: %w", s.wrap(err))
	}
	if recorded != model {
		dim = len(vecs[0])
	}
	blobs := make([][]byte, len(vecs))
	for i, h := range hashes {
		if err := vecindex.Check(vecs[i], dim); err != nil {
			return fmt.Errorf("put embeddings: hash %q: %w", h, err)
		}
		blobs[i] = vecindex.Encode(vecs[i])
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("put embeddings: %w", s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	for lo := 0; lo < len(hashes); lo += insertBatch {
		hi := min(lo+insertBatch, len(hashes))
		// The last value of a hash given twice in one call wins, as it
		// would with one statement per row.
		idx := make(map[string]int, hi-lo)
		for i := lo; i < hi; i++ {
			idx[hashes[i]] = i
		}
		var hs []string
		var bs [][]byte
		for i := lo; i < hi; i++ {
			if idx[hashes[i]] == i {
				hs, bs = append(hs, hashes[i]), append(bs, blobs[i])
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO embed_cache(model, hash, vector) SELECT $1, u.h, u.v FROM unnest($2::text[], $3::bytea[]) u(h, v)
			ON CONFLICT (model, hash) DO UPDATE SET vector = excluded.vector`, model, hs, bs); err != nil {
			return fmt.Errorf("put embeddings: %w", s.wrap(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("put embeddings: %w", s.wrap(err))
	}
	return nil
}

// Stats implements store.Store. VectorMode says how vectors are searched.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	st := store.Stats{Backend: s.Backend(), VectorMode: s.mode}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return st, fmt.Errorf("stats: %w", s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var last *time.Time
	err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM drawers),
		(SELECT count(*) FROM drawers WHERE `+s.vcol()+` IS NOT NULL), (SELECT max(mined_at) FROM files),
		(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm'))`).
		Scan(&st.Files, &st.Drawers, &st.Vectors, &last, &st.SizeBytes)
	if err != nil {
		return st, fmt.Errorf("stats: %w", s.wrap(err))
	}
	if last != nil {
		st.LastMine = last.UTC()
	}
	if st.Model, st.Dim, err = readModel(ctx, tx); err != nil {
		return st, fmt.Errorf("stats: %w", s.wrap(err))
	}
	rows, err := tx.Query(ctx, `SELECT wing, count(*) FROM drawers GROUP BY wing ORDER BY wing`)
	if err != nil {
		return st, fmt.Errorf("stats: %w", s.wrap(err))
	}
	defer rows.Close()
	for rows.Next() {
		var w store.WingStats
		if err := rows.Scan(&w.Wing, &w.Drawers); err != nil {
			return st, fmt.Errorf("stats: %w", s.wrap(err))
		}
		st.Wings = append(st.Wings, w)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats: %w", s.wrap(err))
	}
	return st, nil
}

// Reset implements store.Store.
func (s *Store) Reset(ctx context.Context) error {
	return s.write(ctx, "reset", func(tx pgx.Tx, _ int, gen int64) error {
		// No tombstones: reset_gen makes every older vector cache reload,
		// so the existing ones are of no use either.
		for _, q := range []string{
			`DELETE FROM drawers`,
			`DELETE FROM files`,
			`DELETE FROM terms`,
			`DELETE FROM tombstones`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE palace SET drawers = 0, tokens = 0, reset_gen = $1 WHERE id = 1`, gen)
		return err
	})
}

// Check implements store.Store: the maintained BM25 statistics against a
// recount from the drawers, and every vector's dimension against the model.
// All problems found are reported together.
func (s *Store) Check(ctx context.Context) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("check %s: %w", s.target, s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var problems []string
	var n, wantN, tokens, wantTokens int64
	var dim int
	if err := tx.QueryRow(ctx, `SELECT p.drawers, p.tokens, p.dim, (SELECT count(*) FROM drawers), (SELECT coalesce(sum(size), 0) FROM drawers)
		FROM palace p WHERE id = 1`).Scan(&n, &tokens, &dim, &wantN, &wantTokens); err != nil {
		return fmt.Errorf("check %s: %w", s.target, s.wrap(err))
	}
	if n != wantN || tokens != wantTokens {
		problems = append(problems, fmt.Sprintf("statistics: palace counts %d drawers and %d tokens, the drawers table %d and %d", n, tokens, wantN, wantTokens))
	}
	var bad int
	var example *string
	if err := tx.QueryRow(ctx, `SELECT count(*), min(coalesce(t.term, c.term)) FROM terms t
		FULL JOIN (SELECT u AS term, count(*) AS df FROM drawers, unnest(tsvector_to_array(tsv)) u GROUP BY u) c ON c.term = t.term
		WHERE t.df IS DISTINCT FROM c.df`).Scan(&bad, &example); err != nil {
		return fmt.Errorf("check %s: %w", s.target, s.wrap(err))
	}
	if bad > 0 {
		problems = append(problems, fmt.Sprintf("document frequencies: %d terms (e.g. %q) disagree with the drawers", bad, deref(example)))
	}
	lenExpr := `length(vec) <> $1 * 4`
	if s.mode == ModePGVector {
		lenExpr = `vector_dims(embedding) <> $1`
	}
	if err := tx.QueryRow(ctx, `SELECT count(*), min(id) FROM drawers WHERE `+s.vcol()+` IS NOT NULL AND `+lenExpr, dim).Scan(&bad, &example); err != nil {
		return fmt.Errorf("check %s: %w", s.target, s.wrap(err))
	}
	if bad > 0 {
		problems = append(problems, fmt.Sprintf("vectors: %d drawers (e.g. %q) have a vector that is not of dimension %d", bad, deref(example), dim))
	}
	if len(problems) > 0 {
		return fmt.Errorf("check %s: %d problem(s):\n  %s", s.target, len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Shared implements store.Writer: a PostgreSQL palace may be shared by
// several homes, on several machines.
func (s *Store) Shared() bool { return true }

// LockSource takes a lock on one source that every process using this
// database respects (a session advisory lock, waited for with polling so
// that the statement timeout does not cut the wait short), plus an
// in-process mutex. The miner holds it across reading a file's drawers,
// diffing and applying, so two processes mining one file cannot both
// insert its new drawers or undo each other's deletes. With a pool of one
// connection (PGlite) only the in-process half is taken: holding the one
// connection would starve the miner.
func (s *Store) LockSource(ctx context.Context, source string) (unlock func(), err error) {
	mv, _ := s.locks.LoadOrStore(source, &sync.Mutex{})
	mu := mv.(*sync.Mutex)
	mu.Lock()
	if s.pool.Config().MaxConns < 2 {
		return mu.Unlock, nil
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("lock %q: %w", source, s.wrap(err))
	}
	key := sourceKey(source)
	wait := 5 * time.Millisecond
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
			conn.Release()
			mu.Unlock()
			return nil, fmt.Errorf("lock %q: %w", source, s.wrap(err))
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			conn.Release()
			mu.Unlock()
			return nil, fmt.Errorf("lock %q: %w", source, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
	return func() {
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			// The session's locks go with it.
			conn.Conn().Close(context.Background()) //nolint:errcheck // closing a broken session
		}
		conn.Release()
		mu.Unlock()
	}, nil
}

// sourceKey maps a source to an advisory lock key (64-bit FNV-1a; a
// collision only makes two files wait for each other).
func sourceKey(source string) int64 {
	h := fnv.New64a()
	h.Write([]byte("hivemem source\x00" + source))
	return int64(h.Sum64())
}
