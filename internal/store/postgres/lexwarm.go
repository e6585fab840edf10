package postgres

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/lexindex"
)

// lexWarm is the in-memory lexical index (internal/store/lexindex) of a
// process that asked for it (WarmLexical): Lexical in SQL costs about a
// microsecond per drawer holding a query word, which queries of common
// words only pay for every matching drawer, where the index ranks the same
// drawers in a fraction of that. It is built from the tsvectors and row
// sizes the SQL path scores (so it ranks identically), in the background,
// and follows every process's writes as the exact mode's vector cache does:
// the first search after a write fetches, in one repeatable-read snapshot,
// the tombstones and drawer rows newer than the index (refreshLex). Until it
// is built, while it is rebuilt, and when a refresh does not prove it
// consistent, Lexical runs in SQL.
type lexWarm struct {
	lexindex.Warm

	// For tests and benchmarks: searches the index answered, full builds
	// installed, deltas applied.
	answered, builds, deltas atomic.Int64
}

// WarmLexical opts this process in to the in-memory lexical index: from the
// first Lexical search on, it is built in the background and then answers
// Lexical with exactly the SQL path's ranking, much faster. Long-running
// processes (servers) should call it once after Open; one-shot commands
// should not, as the build reads every drawer.
func (s *Store) WarmLexical() { s.lexw.Enable() }

// kick starts a background build unless one is running; callers hold Mu.
func (x *lexWarm) kick(s *Store) {
	x.Kick(s.buildLex, func() { x.builds.Add(1) })
}

// lexRowsSQL reads drawers as the index takes them: each tsvector lexeme
// with its one position, the BM25 frequency the SQL path scores.
const lexRowsSQL = `SELECT d.rowid, d.id, d.wing, d.room, d.agent, d.date, d.size, u.lex, u.freq
	FROM drawers d CROSS JOIN LATERAL (
		SELECT array_agg(t.lexeme) AS lex, array_agg(t.positions[1]::int) AS freq FROM unnest(d.tsv) t
	) u`

// addRows indexes the rows of a lexRowsSQL query.
func addRows(d *lexindex.Index, rows pgx.Rows) error {
	defer rows.Close()
	var freq []int32
	for rows.Next() {
		var r lexindex.Row
		var size int32
		if err := rows.Scan(&r.Rowid, &r.ID, &r.Wing, &r.Room, &r.Agent, &r.Date, &size, &r.Terms, &freq); err != nil {
			return err
		}
		if len(freq) != len(r.Terms) {
			return fmt.Errorf("drawer %q: %d lexemes but %d frequencies", r.ID, len(r.Terms), len(freq))
		}
		r.Size = int(size)
		r.Freq = make([]uint32, len(freq))
		for i, f := range freq {
			r.Freq[i] = uint32(f)
		}
		d.Add(&r)
	}
	return rows.Err()
}

// buildLex reads every drawer in one snapshot and indexes it.
func (s *Store) buildLex(ctx context.Context) (*lexindex.Index, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var gen, n, total int64
	if err := tx.QueryRow(ctx, `SELECT generation, drawers, tokens FROM palace WHERE id = 1`).Scan(&gen, &n, &total); err != nil {
		return nil, fmt.Errorf("build lexical index: %w", s.wrap(err))
	}
	rows, err := tx.Query(ctx, lexRowsSQL+` ORDER BY d.rowid`)
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", s.wrap(err))
	}
	d := lexindex.New(gen, nil)
	if err := addRows(d, rows); err != nil {
		return nil, fmt.Errorf("build lexical index: %w", s.wrap(err))
	}
	if int64(d.Live()) != n || d.Total() != total {
		return nil, fmt.Errorf("build lexical index: %d drawers of %d tokens, the palace counts %d of %d", d.Live(), d.Total(), n, total)
	}
	d.Pack()
	return d, nil
}

// refreshLex brings the index up to the current generation; callers hold
// x.mu for writing. As refreshVectors: the palace row and the changes are
// read in one repeatable-read snapshot, so every drawer inserted or updated
// since the index's generation has drawers.gen above it and every one
// deleted since a tombstone above it, unless the index is older than
// reset_gen (Reset; also ClearVectors and model changes, which cost a
// needless rebuild) or tomb_floor (tombstones pruned). The palace's drawer
// and token counts, kept by every writer, then check the result: a
// mismatch (say, a delete by an older hivemem that left no tombstone)
// drops the index rather than let it answer. When the index cannot be
// brought up to date here, x.Data is nil on return and a rebuild runs in
// the background.
func (s *Store) refreshLex(ctx context.Context) error {
	x := &s.lexw
	d := x.Data
	if d == nil {
		return nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var gen, resetGen, tombFloor, n, total int64
	if err := tx.QueryRow(ctx, `SELECT generation, reset_gen, tomb_floor, drawers, tokens FROM palace WHERE id = 1`).Scan(&gen, &resetGen, &tombFloor, &n, &total); err != nil {
		return s.wrap(err)
	}
	switch {
	case d.Gen == gen:
		// Another search refreshed it while this one waited for the lock.
		return nil
	case d.Gen < max(resetGen, tombFloor) || d.Gen > gen:
		// d.Gen > gen: the palace was made again (its generations restart).
		x.Data = nil
		x.kick(s)
		return nil
	}
	// From here on a failure leaves d half-updated: it must not answer.
	x.Data = nil
	rows, err := tx.Query(ctx, `SELECT id FROM tombstones WHERE gen > $1`, d.Gen)
	if err != nil {
		return s.wrap(err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return s.wrap(err)
	}
	// Tombstones first, then the rows: a drawer deleted and inserted again
	// since ends up present, one deleted for good absent.
	for _, id := range gone {
		d.Remove(id)
	}
	rows, err = tx.Query(ctx, lexRowsSQL+` WHERE d.gen > $1`, d.Gen)
	if err != nil {
		return s.wrap(err)
	}
	if err := addRows(d, rows); err != nil {
		return s.wrap(err)
	}
	if int64(d.Live()) != n || d.Total() != total {
		x.kick(s)
		return nil
	}
	d.Compact()
	d.Gen = gen
	x.Data = d
	x.deltas.Add(1)
	return nil
}

// lexicalWarm answers Lexical from the in-memory index, after checking
// (one small query) that it reflects the current generation and applying
// the writes since if not; ok is false when the index cannot answer (not
// opted in, not built, being rebuilt), and then SQL must. toks are the
// query's tokens as Lexical takes them, in order, repeats included.
func (s *Store) lexicalWarm(ctx context.Context, toks []string, f store.Filter, k int) (_ []store.Scored, ok bool, err error) {
	x := &s.lexw
	if !x.Enabled() {
		return nil, false, nil
	}
	var gen int64
	if err := s.pool.QueryRow(ctx, `SELECT generation FROM palace WHERE id = 1`).Scan(&gen); err != nil {
		return nil, false, s.wrap(err)
	}
	x.Mu.RLock()
	if d := x.Data; d == nil || d.Gen != gen {
		x.Mu.RUnlock()
		x.Mu.Lock()
		if x.Data == nil {
			x.kick(s)
		} else if err := s.refreshLex(ctx); err != nil {
			x.Mu.Unlock()
			return nil, false, err
		}
		x.Mu.Unlock()
		x.Mu.RLock()
	}
	defer x.Mu.RUnlock()
	// A newer generation than the one read is as good: another search
	// refreshed the index past it meanwhile.
	d := x.Data
	if d == nil || d.Gen < gen {
		return nil, false, nil
	}
	x.answered.Add(1)
	n := d.Live()
	if n == 0 {
		return nil, true, nil
	}
	df := make(map[string]int, len(toks))
	for _, t := range toks {
		df[t] = d.DF(t)
	}
	// The SQL path's plan, so the same ranking.
	toks = lexindex.Prune(toks, n, func(t string) int { return df[t] })
	if len(toks) == 0 {
		return nil, true, nil
	}
	return d.Search(toks, f, k), true, nil
}
