package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/fts"
	"github.com/hivemem/hivemem/internal/store/lexindex"
	"github.com/hivemem/hivemem/internal/store/sqlq"
)

// lexicalSQL scores every drawer whose tsvector matches the query (the GIN
// index finds them) by FTS5's bm25: for each query token (given with its
// IDF, once per occurrence in the query, as FTS5 sums per phrase) the
// token's frequency f is the lexeme's one position, read by narrowing the
// tsvector to the query's lexemes (setweight + ts_filter) first.
// Parameters: $1 tokens, $2 IDFs, $3 k1+1, $4 k1, $5 1-b, $6 b, $7 average
// row size, $8 the tsquery; the filter follows from $9, then the limit.
const lexicalSQL = `SELECT d.id, sc.score FROM drawers d
	CROSS JOIN LATERAL (
		SELECT sum(q.w * ((u.positions[1]::float8 * $3::float8) / (u.positions[1]::float8 + $4::float8 * ($5::float8 + ($6::float8 * d.size) / $7::float8)))) AS score
		FROM unnest(ts_filter(setweight(d.tsv, 'A', $1::text[]), '{a}')) u
		JOIN unnest($1::text[], $2::float8[]) AS q(term, w) ON q.term = u.lexeme
	) sc
	WHERE d.tsv @@ $8::tsquery`

// Lexical implements store.Store with FTS5's bm25 computed in SQL, planned
// as the SQLite backend plans it (see the package comment).
func (s *Store) Lexical(ctx context.Context, query string, f store.Filter, k int) ([]store.Scored, error) {
	toks, err := lexicalTokens(query, f)
	if err != nil || len(toks) == 0 || k <= 0 {
		return nil, err
	}
	if res, ok, err := s.lexicalWarm(ctx, toks, f, k); err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	} else if ok {
		return res, nil
	}
	// One snapshot: the statistics the plan is based on and the rows scored.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	p, err := s.lexicalPlan(ctx, tx, toks)
	if err != nil || p == nil {
		return nil, err
	}
	if res, ok, err := s.lexicalTier(ctx, tx, p, f, k); err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	} else if ok {
		return res, nil
	}
	res, err := s.lexicalRun(ctx, tx, p, distinct(p.toks), f, k)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	}
	return res, nil
}

// lexPlan is what a lexical query is scored by: its tokens after
// lexindex.Prune (once per occurrence), their IDFs, every token's document
// frequency and the average drawer size.
type lexPlan struct {
	toks []string
	idfs []float64
	df   map[string]int
	avg  float64
}

// lexicalPlan reads the statistics of toks in tx and plans the query; it
// is nil when no drawer can match.
func (s *Store) lexicalPlan(ctx context.Context, tx pgx.Tx, toks []string) (*lexPlan, error) {
	var n, total int64
	if err := tx.QueryRow(ctx, `SELECT drawers, tokens FROM palace WHERE id = 1`).Scan(&n, &total); err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	}
	if n == 0 {
		return nil, nil
	}
	df := make(map[string]int, len(toks))
	rows, err := tx.Query(ctx, `SELECT term, df FROM terms WHERE term = ANY($1)`, toks)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	}
	for rows.Next() {
		var t string
		var c int
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
		}
		df[t] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lexical search: %w", s.wrap(err))
	}
	toks = lexindex.Prune(toks, int(n), func(t string) int { return df[t] })
	if len(toks) == 0 {
		return nil, nil
	}
	idfs := make([]float64, len(toks))
	for i, t := range toks {
		idfs[i] = fts.IDF(df[t], int(n))
	}
	return &lexPlan{toks: toks, idfs: idfs, df: df, avg: float64(total) / float64(n)}, nil
}

// lexicalTokens is the tokens query searches for, once per occurrence (none
// when f can match no stored drawer).
func lexicalTokens(query string, f store.Filter) ([]string, error) {
	q, err := store.Analyze(query, f)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	if !filterStorable(f) {
		return nil, nil
	}
	var toks []string
	for _, t := range q.Terms {
		for _, tok := range fts.Tokens(t) {
			if len(tok) <= maxLexeme {
				toks = append(toks, tok)
			}
		}
	}
	return toks, nil
}

// tierBudget is how many drawers the rare terms may match for the tier
// to be tried (or a sixth of what all the terms match, if more), and no
// more than lexindex.TierPays allows: its one query scores their drawers.
const tierBudget = 2000

// lexicalTier answers from the drawers holding one of the query's rarest
// terms alone, when that is provably the exact answer: each such drawer is
// scored over every query token as usual, and a drawer holding none of the
// rare terms scores less than the sum of the other tokens' IDF·(k1+1)
// (BM25's term part stays below IDF·(k1+1) however often the term occurs).
// If the k-th best rare-term drawer beats that bound, nothing else can
// enter the top k. Common query words then cost nothing, where scoring
// every drawer that holds them is most of a full query's time. ok is false
// when the split does not prove itself; the caller runs the full query.
func (s *Store) lexicalTier(ctx context.Context, tx pgx.Tx, p *lexPlan, f store.Filter, k int) (_ []store.Scored, ok bool, err error) {
	toks, idfs, df := p.toks, p.idfs, p.df
	terms := distinct(toks)
	if len(terms) < 2 {
		return nil, false, nil
	}
	slices.SortStableFunc(terms, func(a, b string) int { return cmp.Compare(df[a], df[b]) })
	all := 0
	for _, t := range terms {
		all += df[t]
	}
	budget := max(tierBudget, all/6)
	j, sum := 0, 0
	for j < len(terms)-1 && sum+df[terms[j]] <= budget && lexindex.TierPays(0, sum+df[terms[j]], all) {
		sum += df[terms[j]]
		j++
	}
	if j == 0 {
		return nil, false, nil
	}
	rare := make(map[string]bool, j)
	for _, t := range terms[:j] {
		rare[t] = true
	}
	bound := 0.0
	for i, t := range toks {
		if !rare[t] {
			bound += idfs[i] * (fts.K1 + 1)
		}
	}
	// Slack for float rounding in the server's sum.
	bound = bound*1.001 + 1e-9
	res, err := s.lexicalRun(ctx, tx, p, terms[:j], f, k)
	if err != nil {
		return nil, false, err
	}
	if len(res) < k || res[k-1].Score <= bound {
		return nil, false, nil
	}
	return res, true, nil
}

// lexicalRun scores the drawers in scope whose tsvector holds one of match
// by every query token of p and returns the best k.
func (s *Store) lexicalRun(ctx context.Context, tx pgx.Tx, p *lexPlan, match []string, f store.Filter, k int) ([]store.Scored, error) {
	tsq := make([]string, len(match))
	for i, t := range match {
		tsq[i] = quoteLexeme(t)
	}
	where, fargs := sqlq.Where(sqlq.Postgres, f, 9)
	q := lexicalSQL + where + fmt.Sprintf(` ORDER BY sc.score DESC, d.id COLLATE "C" LIMIT $%d`, 9+len(fargs))
	args := []any{p.toks, p.idfs, fts.K1 + 1, fts.K1, 1 - fts.B, fts.B, p.avg, strings.Join(tsq, " | ")}
	args = append(append(args, fargs...), k)
	return queryAll(ctx, tx, sqlq.Scored, q, args...)
}

// distinct returns toks without repeats, in order of first appearance.
func distinct(toks []string) []string {
	seen := make(map[string]bool, len(toks))
	var out []string
	for _, t := range toks {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
