package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1 (palace.schema_version). They are history: never edit
// one that has shipped, append a new one instead. The pgvector column and
// its index are not here: they depend on the server (see setupVectorMode).
var migrations = []string{
	// 1: the initial palace.
	`
CREATE TABLE palace (
	id             int PRIMARY KEY CHECK (id = 1),
	schema_version int NOT NULL,
	generation     bigint NOT NULL, -- bumped by every write that touches drawers or vectors
	model          text NOT NULL,
	dim            int NOT NULL,
	vector_mode    text NOT NULL,   -- exact or pgvector-hnsw, chosen when the palace is created
	drawers        bigint NOT NULL, -- BM25's row count
	tokens         bigint NOT NULL, -- BM25's total row size
	-- The exact mode's vector caches refresh incrementally (vector.go): a
	-- cache older than reset_gen (the last write that changed every drawer
	-- at once: ClearVectors, Reset, a model change) or than tomb_floor
	-- (tombstones up to it are pruned) reloads everything instead.
	reset_gen      bigint NOT NULL DEFAULT 0,
	tomb_floor     bigint NOT NULL DEFAULT 0
);

CREATE TABLE files (
	source   text PRIMARY KEY,
	hash     text NOT NULL,
	size     bigint NOT NULL,
	mined_at timestamptz, -- NULL when unknown
	wing     text NOT NULL,
	agent    text NOT NULL,
	origin   text NOT NULL  -- the home that mined it (store.File.Origin)
);

CREATE TABLE drawers (
	rowid      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	wing       text NOT NULL,
	room       text NOT NULL,
	agent      text NOT NULL,
	source     text NOT NULL REFERENCES files(source),
	heading    text NOT NULL,
	line_start int NOT NULL,
	line_end   int NOT NULL,
	date       text NOT NULL, -- YYYY-MM-DD or ''
	hash       text NOT NULL,
	text       text NOT NULL,
	-- Full text: the heading's and text's tokens (internal/store/fts, the
	-- SQLite palace's tokenizer), each lexeme once, its one position being
	-- its BM25 frequency (2 per heading hit + 1 per text hit); size is the
	-- row's token count as FTS5 counts it (heading + text + 3 scope tokens).
	tsv        tsvector NOT NULL,
	size       int NOT NULL,
	vec        bytea, -- exact mode: little-endian float32 x dim, NULL until embedded
	gen        bigint NOT NULL -- the generation that last inserted or updated the row
);

CREATE INDEX drawers_source ON drawers(source, line_start);
CREATE INDEX drawers_wing_room ON drawers(wing, room);
CREATE INDEX drawers_agent ON drawers(agent);
CREATE INDEX drawers_date ON drawers(date);
CREATE INDEX drawers_tsv ON drawers USING gin(tsv);
CREATE INDEX drawers_gen ON drawers(gen);

-- Drawers deleted at each generation (exact mode), so that vector caches
-- can drop them; pruned up to palace.tomb_floor.
CREATE TABLE tombstones (
	gen bigint NOT NULL,
	id  text NOT NULL,
	PRIMARY KEY (gen, id)
);

-- Document frequencies of every indexed token (BM25's IDF), kept in step
-- by each write transaction.
CREATE TABLE terms (
	term text PRIMARY KEY,
	df   int NOT NULL
);

CREATE TABLE embed_cache (
	model  text NOT NULL,
	hash   text NOT NULL,
	vector bytea NOT NULL,
	PRIMARY KEY (model, hash)
);
`,
	// 2: the room a file was mined into (store.File.Room).
	`ALTER TABLE files ADD COLUMN room text NOT NULL DEFAULT '';`,
	// 3: the section that replaces a drawer's (store.Drawer.SupersededBy).
	`ALTER TABLE drawers ADD COLUMN superseded_by text NOT NULL DEFAULT '';`,
}

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key that serialises migrations of one
// database ("hvmm" in ASCII).
const migrationLock = 0x68766d6d

// ErrSchemaTooNew is returned for a palace written by a newer hivemem.
var ErrSchemaTooNew = errors.New("palace schema is newer than this hivemem")

// Vector modes.
const (
	ModeExact    = "exact"         // float32 BLOBs, scored exactly by hivemem
	ModePGVector = "pgvector-hnsw" // vector column, HNSW cosine index, <=> in SQL
)

// migrate brings the schema to SchemaVersion in one transaction, under an
// advisory lock so that two processes opening a new palace at once cannot
// both create it, and returns the palace's vector mode and the version it
// found. A newer schema is refused rather than guessed at.
func migrate(ctx context.Context, conn *pgx.Conn, wantMode string) (mode string, from int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return "", 0, fmt.Errorf("lock for migration: %w", err)
	}
	// The palace is the one in the current schema (the first schema of the
	// search path that exists), where the migrations create it and where
	// unqualified names find it first. to_regclass('palace') would look
	// through the whole search path and adopt another schema's palace.
	var schema *string
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT current_schema(), to_regclass(quote_ident(current_schema()) || '.palace') IS NOT NULL`).Scan(&schema, &exists); err != nil {
		return "", 0, fmt.Errorf("read schema version: %w", err)
	}
	if schema == nil {
		return "", 0, errors.New("no schema of the search path exists: create it, or fix search_path in palace.dsn / HIVEMEM_DSN")
	}
	v := 0
	if exists {
		if err := tx.QueryRow(ctx, `SELECT schema_version, vector_mode FROM palace WHERE id = 1`).Scan(&v, &mode); err != nil {
			return "", 0, fmt.Errorf("read schema version: %w", err)
		}
	}
	if v > SchemaVersion {
		return "", v, fmt.Errorf("%w: the database has schema version %d, this binary knows up to %d: upgrade hivemem", ErrSchemaTooNew, v, SchemaVersion)
	}
	if v == SchemaVersion {
		return mode, v, tx.Commit(ctx)
	}
	if v == 0 {
		mode, err = chooseMode(ctx, tx, wantMode)
		if err != nil {
			return "", 0, err
		}
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return "", v, fmt.Errorf("migrate schema to version %d: %w", i+1, err)
		}
		if i == 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO palace(id, schema_version, generation, model, dim, vector_mode, drawers, tokens)
				VALUES (1, 0, 0, '', 0, $1, 0, 0)`, mode); err != nil {
				return "", v, fmt.Errorf("migrate schema to version 1: %w", err)
			}
			if mode == ModePGVector {
				if _, err := tx.Exec(ctx, `ALTER TABLE drawers ADD COLUMN embedding vector`); err != nil {
					return "", v, fmt.Errorf("add the pgvector column: %w", err)
				}
			}
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE palace SET schema_version = $1`, SchemaVersion); err != nil {
		return "", v, fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", v, fmt.Errorf("commit migration: %w", err)
	}
	return mode, v, nil
}

// chooseMode picks a new palace's vector mode: pgvector when the extension
// can be created (or already is), else exact; wantMode ("auto", "exact",
// "pgvector") can force either.
func chooseMode(ctx context.Context, tx pgx.Tx, wantMode string) (string, error) {
	if wantMode == "exact" {
		return ModeExact, nil
	}
	// A savepoint, so that a server without the extension leaves the
	// migration's transaction usable.
	sp, err := tx.Begin(ctx)
	if err != nil {
		return "", fmt.Errorf("probe pgvector: %w", err)
	}
	_, err = sp.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
	if err == nil {
		if err := sp.Commit(ctx); err != nil {
			return "", fmt.Errorf("probe pgvector: %w", err)
		}
		return ModePGVector, nil
	}
	if rerr := sp.Rollback(ctx); rerr != nil {
		return "", fmt.Errorf("probe pgvector: %w", rerr)
	}
	if wantMode == "pgvector" {
		return "", fmt.Errorf("vector mode pgvector asked for, but the server cannot create the extension: %w", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return "", fmt.Errorf("probe pgvector: %w", err)
	}
	return ModeExact, nil
}
