package postgres

import (
	"context"
	"fmt"
)

// Scrub implements store.Admin: the embedding-cache entries of hashes go
// (under every model), then VACUUM makes the space of deleted rows
// (files and drawers, whose sources and texts held the text, their
// terms, the cache) reusable. The rows left every other home's view of
// the palace when they were deleted. PostgreSQL's data directory is not
// in the hivemem home; VACUUM does not overwrite dead tuples on disk,
// VACUUM FULL (which rewrites the tables under an exclusive lock) is for
// the server's administrator to run.
func (s *Store) Scrub(ctx context.Context, hashes []string) error {
	if len(hashes) > 0 {
		if _, err := s.pool.Exec(ctx, `DELETE FROM embed_cache WHERE hash = ANY($1)`, hashes); err != nil {
			return fmt.Errorf("scrub %s: embedding cache: %w", s.target, s.wrap(err))
		}
	}
	// VACUUM cannot run in a transaction: one statement per table.
	for _, table := range []string{"files", "drawers", "terms", "tombstones", "embed_cache"} {
		if _, err := s.pool.Exec(ctx, `VACUUM `+table); err != nil {
			return fmt.Errorf("scrub %s: vacuum %s: %w", s.target, table, s.wrap(err))
		}
	}
	return nil
}
