package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hivemem/hivemem/internal/store/fts"
)

// maxLexeme is the longest token a tsvector holds (PostgreSQL's limit is
// 2047 bytes); longer tokens count in the row size but are not indexed.
const maxLexeme = 2046

// maxFreq is the largest tsvector position, where a token's frequency is
// kept.
const maxFreq = 16383

// scopeTokens is the number of tokens FTS5's scope column adds to every
// row's size (wing, room and agent, one token each).
const scopeTokens = 3

// indexed is one drawer's full-text data.
type indexed struct {
	tsv   string   // tsvector literal: 'token':freq ...
	size  int      // FTS5's row size
	terms []string // the distinct indexed tokens
}

// index tokenizes a drawer's heading and text.
func index(heading, text string) indexed {
	head, body := fts.Tokens(heading), fts.Tokens(text)
	freq := make(map[string]int, len(head)+len(body))
	for _, t := range head {
		freq[t] += fts.HeadingWeight
	}
	for _, t := range body {
		freq[t] += fts.TextWeight
	}
	x := indexed{size: len(head) + len(body) + scopeTokens}
	for t := range freq {
		if len(t) <= maxLexeme {
			x.terms = append(x.terms, t)
		}
	}
	slices.Sort(x.terms)
	var b strings.Builder
	for i, t := range x.terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(t))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(min(freq[t], maxFreq)))
	}
	x.tsv = b.String()
	return x
}

// quoteLexeme writes a token as a tsvector/tsquery lexeme literal.
func quoteLexeme(t string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + "'"
}

// statsDelta is what one write did to the BM25 statistics.
type statsDelta struct {
	drawers int64
	tokens  int64
	df      map[string]int
}

func (d *statsDelta) add(terms []string, by int) {
	if d.df == nil {
		d.df = make(map[string]int)
	}
	for _, t := range terms {
		d.df[t] += by
	}
}

// apply writes the delta in the write transaction. Terms are updated in
// sorted order (writers are serialised anyway); a term whose frequency
// drops to zero is deleted.
func (d *statsDelta) apply(ctx context.Context, tx pgx.Tx) error {
	if d.drawers != 0 || d.tokens != 0 {
		if _, err := tx.Exec(ctx, `UPDATE palace SET drawers = drawers + $1, tokens = tokens + $2 WHERE id = 1`, d.drawers, d.tokens); err != nil {
			return fmt.Errorf("update statistics: %w", err)
		}
	}
	var terms []string
	var by []int32
	for _, t := range slices.Sorted(maps.Keys(d.df)) {
		if n := d.df[t]; n != 0 {
			terms, by = append(terms, t), append(by, int32(n))
		}
	}
	if len(terms) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `WITH u AS (SELECT * FROM unnest($1::text[], $2::int[]) AS u(term, by)),
		up AS (INSERT INTO terms AS t(term, df) SELECT term, by FROM u WHERE by > 0
			ON CONFLICT (term) DO UPDATE SET df = t.df + excluded.df RETURNING 1)
		UPDATE terms t SET df = t.df + u.by FROM u WHERE u.by < 0 AND t.term = u.term`, terms, by); err != nil {
		return fmt.Errorf("update document frequencies: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM terms WHERE term = ANY($1) AND df <= 0`, terms); err != nil {
		return fmt.Errorf("update document frequencies: %w", err)
	}
	return nil
}
