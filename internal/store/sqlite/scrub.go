package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Scrub implements store.Admin: the embedding-cache entries of hashes go
// (under every model), the full-text index is merged into one segment
// (FTS5 keeps the tokens of deleted rows in older segments until then),
// SQLite overwrites freed content with zeros (secure_delete), VACUUM
// rebuilds the file without free pages, and a truncating checkpoint
// empties the write-ahead log, whose older frames hold pages as they were
// before the deletes.
func (s *Store) Scrub(ctx context.Context, hashes []string) error {
	s.followFile()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("scrub %s: %w", s.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return fmt.Errorf("scrub %s: secure delete: %w", s.path, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`) //nolint:errcheck // the default again; the scrub is done
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("scrub %s: begin: %w", s.path, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for start := 0; start < len(hashes); start += 500 {
		chunk := hashes[start:min(len(hashes), start+500)]
		args := make([]any, len(chunk))
		for i, h := range chunk {
			args[i] = h
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM embed_cache WHERE hash IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...); err != nil {
			return fmt.Errorf("scrub %s: embedding cache: %w", s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO drawers_fts(drawers_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("scrub %s: merge the full-text index: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("scrub %s: commit: %w", s.path, err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("scrub %s: vacuum: %w", s.path, explainNoSpace(s.path, err))
	}
	return checkpointTruncate(ctx, conn, s.path)
}

// checkpointTruncate copies the write-ahead log into the database and
// truncates it to nothing, waiting (busy timeout) for readers; a reader
// that holds on past it is an error, since the log still holds old pages.
func checkpointTruncate(ctx context.Context, conn *sql.Conn, path string) error {
	var busy, logFrames, done int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("scrub %s: checkpoint: %w", path, err)
	}
	if busy != 0 {
		return fmt.Errorf("scrub %s: checkpoint: readers kept the write-ahead log busy (%d of %d frames copied); run the purge again", path, done, logFrames)
	}
	return nil
}
