package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/lexindex"
)

// lexIndex keeps an in-memory copy (internal/store/lexindex, shared with
// the PostgreSQL backend) of what FTS5's bm25 reads for drawers_fts
// (postings with per-row hit counts, row sizes, totals), so that a warm
// process ranks a query in a fraction of the time FTS5 takes: FTS5 spends
// about a microsecond per matching row looking up its size. It is only
// built in processes that ask for it (WarmLexical), in the background, and
// answers only when it reflects the palace generation a query reads; until
// then, and for anything it cannot answer exactly (a term that is a phrase
// to the tokenizer, or equals a scope token), Lexical runs on FTS5.
type lexIndex struct {
	lexindex.Warm
}

// lexRow is a drawer as the index sees it.
type lexRow struct {
	rowid                       int64
	id, wing, room, agent, date string
	heading, text               string
	headToks, textToks          []string // filled by tokenizeRows
}

// lexDelta is what one write did to the full-text index.
type lexDelta struct {
	missed bool     // drawers were written without collecting add: drop the index
	reset  bool     // every drawer deleted first
	remove []string // drawers deleted (before add)
	add    []lexRow // drawers inserted or re-indexed (an id already present is replaced)
}

// WarmLexical opts this process in to the in-memory lexical index: from the
// first Lexical search on, it is built in the background and then answers
// Lexical with exactly FTS5's ranking, much faster. Long-running processes
// (servers) should call it once after Open; one-shot commands should not,
// as the build reads every drawer.
func (s *Store) WarmLexical() { s.lexi.Enable() }

// kick starts a background build unless one is running; callers hold Mu.
func (x *lexIndex) kick(s *Store) {
	x.Kick(func(ctx context.Context) (*lexindex.Index, error) { return buildLex(ctx, s) }, nil)
}

// buildLex reads every drawer in one snapshot and indexes it.
func buildLex(ctx context.Context, s *Store) (*lexindex.Index, error) {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	gen, err := readGeneration(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, id, wing, room, agent, date, heading, text FROM drawers ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("build lexical index: %w", err)
	}
	defer rows.Close()
	d := lexindex.New(gen, scopeTokens)
	var batch []lexRow
	flush := func() error {
		if err := tokenizeRows(ctx, &s.tok, batch); err != nil {
			return err
		}
		for i := range batch {
			d.Add(batch[i].row())
		}
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		var r lexRow
		if err := rows.Scan(&r.rowid, &r.id, &r.wing, &r.room, &r.agent, &r.date, &r.heading, &r.text); err != nil {
			return nil, fmt.Errorf("build lexical index: %w", err)
		}
		if batch = append(batch, r); len(batch) == 500 {
			if err := flush(); err != nil {
				return nil, fmt.Errorf("build lexical index: %w", err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("build lexical index: %w", err)
	}
	if err := flush(); err != nil {
		return nil, fmt.Errorf("build lexical index: %w", err)
	}
	d.Pack()
	return d, nil
}

// row is r as the shared index takes it: heading and text tokens counted
// with bm25Weights (2 per heading hit, 1 per text hit), and FTS5's row
// size, which counts the scope column's tokens too.
func (r *lexRow) row() *lexindex.Row {
	freq := make(map[string]uint32, len(r.headToks)+len(r.textToks))
	for _, t := range r.headToks {
		freq[t] += 2
	}
	for _, t := range r.textToks {
		freq[t]++
	}
	out := &lexindex.Row{
		Rowid: r.rowid, ID: r.id, Wing: r.wing, Room: r.room, Agent: r.agent, Date: r.date,
		Size:  len(r.headToks) + len(r.textToks) + len(scopeTokens(r.wing, r.room, r.agent)),
		Terms: make([]string, 0, len(freq)),
		Freq:  make([]uint32, 0, len(freq)),
	}
	for t, f := range freq {
		out.Terms = append(out.Terms, t)
		out.Freq = append(out.Freq, f)
	}
	return out
}

// tokenizeRows fills the tokens of rows: in Go for ASCII text, through
// SQLite's tokenizer (one round trip for all the rest) otherwise.
func tokenizeRows(ctx context.Context, tk *tokenizer, rows []lexRow) error {
	var texts []string
	var dst []*[]string
	for i := range rows {
		r := &rows[i]
		for _, p := range []struct {
			text string
			dst  *[]string
		}{{r.heading, &r.headToks}, {r.text, &r.textToks}} {
			*p.dst = nil
			if !asciiTokens(p.text, func(t string) { *p.dst = append(*p.dst, t) }) {
				texts = append(texts, p.text)
				dst = append(dst, p.dst)
			}
		}
	}
	for lo := 0; lo < len(texts); lo += maxParams {
		hi := min(lo+maxParams, len(texts))
		toks, err := tk.tokenize(ctx, texts[lo:hi])
		if err != nil {
			return err
		}
		for i, ts := range toks {
			*dst[lo+i] = ts
		}
	}
	return nil
}

// scopeTokens are the tokens of the schema's generated scope column.
func scopeTokens(wing, room, agent string) []string {
	var out []string
	for _, p := range []struct{ prefix, val string }{{"w", wing}, {"r", room}, {"a", agent}} {
		asciiTokens(p.prefix+strings.ToUpper(fmt.Sprintf("%x", p.val)), func(t string) { out = append(out, t) })
	}
	return out
}

// follow applies a committed write that moved the palace from oldGen to
// newGen (see vecIndex.follow); text is tokenized before the lock is taken.
func (x *lexIndex) follow(tk *tokenizer, oldGen, newGen int64, delta lexDelta) {
	if !x.Enabled() {
		return
	}
	x.Mu.RLock()
	d := x.Data
	x.Mu.RUnlock()
	if d == nil {
		return
	}
	err := tokenizeRows(context.Background(), tk, delta.add)
	x.Mu.Lock()
	defer x.Mu.Unlock()
	if x.Data == nil || x.Data.Gen == newGen {
		return
	}
	if err != nil || delta.missed || x.Data.Gen != oldGen {
		x.Data = nil
		return
	}
	d = x.Data
	if delta.reset {
		d = lexindex.New(newGen, scopeTokens)
		x.Data = d
	}
	d.Gen = newGen
	for _, id := range delta.remove {
		d.Remove(id)
	}
	for i := range delta.add {
		d.Add(delta.add[i].row())
	}
	d.Compact()
}

// lexicalWarm answers Lexical from the in-memory index; ok is false when
// the index cannot answer (not opted in, not built for the current
// generation, or a term it cannot score exactly), and then FTS5 must.
func (s *Store) lexicalWarm(ctx context.Context, terms []string, f store.Filter, k int) (_ []store.Scored, ok bool, err error) {
	x := &s.lexi
	if !x.Enabled() {
		return nil, false, nil
	}
	gen, err := readGeneration(ctx, s.rdb)
	if err != nil {
		return nil, false, err
	}
	toks, err := queryTokens(ctx, &s.tok, terms)
	if err != nil {
		return nil, false, err
	}
	x.Mu.RLock()
	defer x.Mu.RUnlock()
	d := x.Data
	if d == nil || d.Gen < gen {
		x.kick(s)
		return nil, false, nil
	}
	// The same plan as the FTS5 path, so the same ranking.
	infos := make([]termInfo, len(terms))
	byTerm := make(map[string]string, len(terms))
	for i, t := range terms {
		ts := toks[i]
		if len(ts) > 1 || len(ts) == 1 && d.HasScope(ts[0]) {
			return nil, false, nil // a phrase, or a token scope also holds
		}
		infos[i] = termInfo{term: t, tokens: len(ts), known: len(ts) == 1}
		if infos[i].known {
			infos[i].df = d.DF(ts[0])
			byTerm[t] = ts[0]
		}
	}
	infos = lexindex.Prune(infos, d.Live(), termInfo.freq)
	if len(infos) == 0 {
		return nil, true, nil
	}
	q := make([]string, len(infos))
	for i, ti := range infos {
		q[i] = byTerm[ti.term]
	}
	return d.Search(q, f, k), true, nil
}

// queryTokens tokenizes query terms: in Go when ASCII, else with SQLite.
func queryTokens(ctx context.Context, tk *tokenizer, terms []string) ([][]string, error) {
	out := make([][]string, len(terms))
	var rest []string
	var at []int
	for i, t := range terms {
		if !asciiTokens(t, func(tok string) { out[i] = append(out[i], tok) }) {
			rest = append(rest, t)
			at = append(at, i)
		}
	}
	if len(rest) > 0 {
		toks, err := tk.tokenize(ctx, rest)
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			out[i] = toks[j]
		}
	}
	return out, nil
}

// lexRowsByID reads the rowid and text of drawers just written in tx, for
// the index to follow a write.
func lexRowsByID(ctx context.Context, tx *sql.Tx, ids []string) (map[string]lexRow, error) {
	out := make(map[string]lexRow, len(ids))
	for lo := 0; lo < len(ids); lo += maxParams {
		chunk := ids[lo:min(lo+maxParams, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT rowid, id, wing, room, agent, date, heading, text FROM drawers WHERE id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var r lexRow
			if err := rows.Scan(&r.rowid, &r.id, &r.wing, &r.room, &r.agent, &r.date, &r.heading, &r.text); err != nil {
				rows.Close()
				return nil, err
			}
			out[r.id] = r
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
