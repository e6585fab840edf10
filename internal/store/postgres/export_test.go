package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/hivemem/hivemem/internal/store"
)

// VecRefreshes reports how often the exact mode's vector cache was
// reloaded whole and refreshed incrementally (for the external tests).
func (s *Store) VecRefreshes() (full, incremental int64) {
	return s.vec.fullLoads.Load(), s.vec.deltas.Load()
}

// DropVecCache makes the next exact search reload every vector (into the
// buffers it has, as a reload did before): what each search after another
// process's write did before refreshes were incremental, the benchmark's
// baseline.
func (s *Store) DropVecCache() {
	s.vec.mu.Lock()
	defer s.vec.mu.Unlock()
	s.vec.loaded = false
}

// LexWarmStats reports how many searches the warm lexical index answered,
// how many full builds it installed and how many deltas it applied.
func (s *Store) LexWarmStats() (answered, builds, deltas int64) {
	x := &s.lexw
	return x.answered.Load(), x.builds.Load(), x.deltas.Load()
}

// WaitLexWarm waits for a background build of the warm lexical index.
func (s *Store) WaitLexWarm() { s.lexw.Wait() }

// LexicalPlain is the k best drawers in f of one full query over the terms
// Lexical searches for query (neither the rare-terms tier nor the warm
// index), and whether the tier answers Lexical(query, f, k) instead.
func (s *Store) LexicalPlain(ctx context.Context, query string, f store.Filter, k int) (_ []store.Scored, tiered bool, err error) {
	toks, err := lexicalTokens(query, f)
	if err != nil || len(toks) == 0 || k <= 0 {
		return nil, false, err
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	p, err := s.lexicalPlan(ctx, tx, toks)
	if err != nil || p == nil {
		return nil, false, err
	}
	_, tiered, err = s.lexicalTier(ctx, tx, p, f, k)
	if err != nil {
		return nil, false, err
	}
	res, err := s.lexicalRun(ctx, tx, p, distinct(p.toks), f, k)
	return res, tiered, err
}
