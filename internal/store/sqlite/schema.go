package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1 (PRAGMA user_version). They are history: never edit one
// that has shipped, append a new one instead.
var migrations = []string{
	// 1: the initial palace.
	`
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value
) WITHOUT ROWID;

INSERT INTO meta(key, value) VALUES ('generation', 0), ('model', ''), ('dim', 0);

CREATE TABLE files (
	source   TEXT PRIMARY KEY,
	hash     TEXT NOT NULL,
	size     INTEGER NOT NULL,
	mined_at INTEGER NOT NULL, -- unix nanoseconds, 0 when unknown
	wing     TEXT NOT NULL,
	agent    TEXT NOT NULL
) WITHOUT ROWID;

-- The vector is the last column so that reading the metadata or the text of
-- a drawer never has to step over it.
CREATE TABLE drawers (
	rowid      INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	wing       TEXT NOT NULL,
	room       TEXT NOT NULL,
	agent      TEXT NOT NULL,
	source     TEXT NOT NULL REFERENCES files(source),
	heading    TEXT NOT NULL,
	line_start INTEGER NOT NULL,
	line_end   INTEGER NOT NULL,
	date       TEXT NOT NULL, -- YYYY-MM-DD or ''
	hash       TEXT NOT NULL,
	text       TEXT NOT NULL,
	vector     BLOB, -- little-endian float32 x dim, NULL until embedded
	-- The filter fields as three tokens for the full-text index, hex-encoded
	-- so any value is one token: a wing/room/agent filter then narrows the
	-- FTS5 query itself instead of every match being joined and dropped.
	scope TEXT GENERATED ALWAYS AS ('w' || hex(wing) || ' r' || hex(room) || ' a' || hex(agent)) VIRTUAL
);

CREATE INDEX drawers_source ON drawers(source, line_start);
CREATE INDEX drawers_wing_room ON drawers(wing, room);
CREATE INDEX drawers_agent ON drawers(agent);
CREATE INDEX drawers_date ON drawers(date);
-- MissingVectors and the vector count look only at this small index.
CREATE INDEX drawers_novec ON drawers(rowid) WHERE vector IS NULL;

-- External-content FTS5 index over drawers, kept in step by triggers inside
-- the writing transaction. Queries rank with bm25 weights (2, 1, 0): the
-- heading counts double and the scope column not at all.
CREATE VIRTUAL TABLE drawers_fts USING fts5(
	heading, text, scope,
	content='drawers', content_rowid='rowid',
	tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO drawers_fts(drawers_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0, 0.0)');
-- Document frequencies, to skip query terms too common to matter.
CREATE VIRTUAL TABLE drawers_vocab USING fts5vocab(drawers_fts, row);

CREATE TRIGGER drawers_fts_ai AFTER INSERT ON drawers BEGIN
	INSERT INTO drawers_fts(rowid, heading, text, scope) VALUES (new.rowid, new.heading, new.text, new.scope);
END;
CREATE TRIGGER drawers_fts_ad AFTER DELETE ON drawers BEGIN
	INSERT INTO drawers_fts(drawers_fts, rowid, heading, text, scope) VALUES ('delete', old.rowid, old.heading, old.text, old.scope);
END;
-- Line numbers move on every edit above a section; only re-index a drawer
-- when something the index holds changed.
CREATE TRIGGER drawers_fts_au AFTER UPDATE OF heading, text, wing, room, agent ON drawers
WHEN old.heading IS NOT new.heading OR old.text IS NOT new.text OR old.wing IS NOT new.wing
	OR old.room IS NOT new.room OR old.agent IS NOT new.agent
BEGIN
	INSERT INTO drawers_fts(drawers_fts, rowid, heading, text, scope) VALUES ('delete', old.rowid, old.heading, old.text, old.scope);
	INSERT INTO drawers_fts(rowid, heading, text, scope) VALUES (new.rowid, new.heading, new.text, new.scope);
END;

CREATE TABLE embed_cache (
	model  TEXT NOT NULL,
	hash   TEXT NOT NULL,
	vector BLOB NOT NULL,
	PRIMARY KEY (model, hash)
) WITHOUT ROWID;
`,
	// 2: which home mined each file (store.File.Origin).
	`ALTER TABLE files ADD COLUMN origin TEXT NOT NULL DEFAULT '';`,
	// 3: the room a file was mined into (store.File.Room).
	`ALTER TABLE files ADD COLUMN room TEXT NOT NULL DEFAULT '';`,
	// 4: the section that replaces a drawer's (store.Drawer.SupersededBy).
	`ALTER TABLE drawers ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';`,
}

// schemaVersion is the version this binary writes.
var schemaVersion = len(migrations)

// migrate brings the database to schemaVersion in one immediate transaction,
// so that two processes opening a new palace at once cannot both create it.
// A database written by a newer hivemem is refused rather than guessed at.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("palace schema version %d is newer than this hivemem understands (%d): upgrade hivemem", v, schemaVersion)
	}
	if v == schemaVersion {
		return nil
	}
	for i := v; i < schemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", i+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}
