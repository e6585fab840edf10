package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/fts"
	"github.com/hivemem/hivemem/internal/store/lexindex"
	"github.com/hivemem/hivemem/internal/store/sqlq"
)

// ftsTokenize is the tokenizer of drawers_fts (see the schema); the query
// tokenizer below must use the same one so its tokens are the index's.
const ftsTokenize = `porter unicode61 remove_diacritics 2`

// bm25Weights ranks a heading match twice a text match; the scope column is
// only there for filtering and weighs nothing.
const bm25Weights = `2.0, 1.0, 0.0`

// quote makes s one FTS5 string: inside double quotes nothing is syntax,
// and a double quote is written twice.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// ftsQuery builds the FTS5 MATCH expression for a plain-text query: every
// term quoted, joined by OR, searched in heading and text only. "" means
// there is nothing to search for.
func ftsQuery(q string) string {
	return matchExpr(store.QueryTerms(q), store.Filter{})
}

// matchExpr ORs the terms over heading and text, and ANDs the wing, room
// and agent of f as scope tokens, so that FTS5 intersects posting lists
// instead of ranking every match and leaving SQL to drop most of them
// (Lexical passes only those of few drawers, see planScope).
func matchExpr(terms []string, f store.Filter) string {
	if len(terms) == 0 {
		return ""
	}
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = quote(t)
	}
	expr := "{heading text} : (" + strings.Join(quoted, " OR ") + ")"
	for _, t := range filterScopeTokens(f) {
		expr += " AND scope : " + quote(t)
	}
	return expr
}

// scopeField is a filter field with a scope token: its token prefix and
// the field.
type scopeField struct {
	prefix string
	val    *string
}

// scopeFields are f's wing, room and agent.
func scopeFields(f *store.Filter) []scopeField {
	return []scopeField{{"w", &f.Wing}, {"r", &f.Room}, {"a", &f.Agent}}
}

// filterScopeTokens are the scope tokens of f's wing, room and agent, those set.
func filterScopeTokens(f store.Filter) []string {
	var toks []string
	for _, p := range scopeFields(&f) {
		if *p.val != "" {
			toks = append(toks, scopeToken(p.prefix, *p.val))
		}
	}
	return toks
}

// scopeToken is the token the schema's generated scope column holds for a
// filter value: prefix + hex of its UTF-8 bytes (SQLite's hex(), which the
// tokenizer lowercases).
func scopeToken(prefix, val string) string {
	return prefix + hex.EncodeToString([]byte(val))
}

// Lexical implements store.Store with FTS5's bm25, whose cost is about a
// microsecond for every drawer that matches any term (a per-row lookup of
// the document length), so the work goes into scoring as few rows as
// possible while returning what a plain "t1 OR t2 ..." query would:
//
//   - Terms that occur in at least half of all drawers are dropped when
//     rarer terms remain: bm25 clamps their IDF to 1e-6, so they change no
//     ranking (scores move by less than 1e-5), yet they would make FTS5
//     score most of the palace.
//   - A wing, room or agent filter that holds few drawers is part of the
//     FTS5 query (a scope token), so only drawers in scope are scored; one
//     that holds many is not, as FTS5 would walk its long posting list in
//     every statement (see planScope), and the best matches are taken
//     deeper instead until k of them are in scope (see topK). The drawers
//     table is read for the rows ranked only, to check the filter exactly;
//     with date bounds, best first until k are within them.
//   - When the query mixes rare and common terms, it is first answered from
//     the drawers matching the rare terms (see lexicalTier), which is exact
//     whenever it can be proven to be, and skips scoring the common terms'
//     long posting lists — unless the filter's scope is small (planScope),
//     where the full query is the cheaper one, or the common terms match
//     too few drawers for the probes to pay.
//
// In a process that opted in (WarmLexical), an in-memory index answers
// instead whenever it is up to date, with the same plan and ranking (see
// lexicalWarm).
func (s *Store) Lexical(ctx context.Context, query string, f store.Filter, k int) ([]store.Scored, error) {
	q, err := store.Analyze(query, f)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	terms := q.Terms
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	s.followFile()
	if res, ok, err := s.lexicalWarm(ctx, terms, f, k); err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	} else if ok {
		return res, nil
	}
	// One read transaction: the frequencies the plan is based on and the
	// index the queries run on are the same snapshot.
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	infos, n, err := s.termStats(ctx, tx, terms)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	infos = lexindex.Prune(infos, n, termInfo.freq)
	if len(infos) == 0 {
		return nil, nil
	}
	sc, err := s.planScope(ctx, tx, f, n)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	if !sc.small {
		res, ok, err := s.lexicalTier(ctx, tx, infos, n, sc, k)
		if err != nil {
			return nil, fmt.Errorf("lexical search: %w", err)
		}
		if ok {
			return res, nil
		}
	}
	// Splitting this query by rowid range over two connections measured
	// slower, not faster, on a busy 2-core machine.
	terms = terms[:0]
	for _, ti := range infos {
		terms = append(terms, ti.term)
	}
	res, err := s.topK(ctx, tx, bm25SQL, []any{matchExpr(terms, sc.match)}, sc, k)
	if err != nil {
		return nil, fmt.Errorf("lexical search: %w", err)
	}
	return res, nil
}

// scope is a lexical search's filter as Lexical plans it (see planScope).
type scope struct {
	f     store.Filter // the filter, which every result is held to
	match store.Filter // its wing, room and agent whose scope tokens are in MATCH
	small bool         // one of f's wing, room and agent holds at most tierBudget drawers
	share float64      // the share of MATCH's rows expected in f's scope, in (0, 1]
}

// exactScope is f with every scope token in MATCH.
func exactScope(f store.Filter) scope {
	return scope{f: f, match: store.Filter{Wing: f.Wing, Room: f.Room, Agent: f.Agent}, share: 1}
}

// maxTokenShare is the largest share of the palace a wing, room or agent
// may hold for its scope token to go into MATCH. FTS5 walks a query
// token's whole posting list in each statement that names it, for the AND
// and again for bm25's IDF (about 60 ns a drawer): over 100 000 drawers a
// room most of them are in made a search four times slower than the same
// search unscoped. Without the token, FTS5 scores the matches out of scope
// too (about 1 µs each, but a query's terms match few drawers next to the
// scope), and topK looks up about 1/share times more of the best rows to
// find k in scope.
const maxTokenShare = 0.25

// planScope reads how many drawers f's wing, room and agent each hold
// (cached, see termStats) among the palace's n, and plans the search:
//
//   - small: one of them holds at most tierBudget drawers. Then the full
//     query is cheaper than lexicalTier: bm25 counts every term's matches
//     over the whole palace once per query (its IDF), which the tier's
//     final query pays as well, so the tier can only save scoring rows
//     outside E, and the scope tokens already keep the full query to at
//     most that many rows; the tier's probes would be extra work. On
//     LongMemEval (a wing per question) skipping them cut the hybrid p50
//     by a fifth (README, "Benchmarks").
//   - match: those holding at most maxTokenShare of the drawers, whose
//     scope tokens go into MATCH; share is the product of the others'
//     shares (as if independent of each other), which topK and
//     lexicalTier's probe are told to expect. The scope weighs nothing in
//     bm25, so the scores are the same with or without a token.
func (s *Store) planScope(ctx context.Context, db querier, f store.Filter, n int) (scope, error) {
	sc := exactScope(f)
	toks := filterScopeTokens(f)
	if len(toks) == 0 {
		return sc, nil
	}
	infos, _, err := s.termStats(ctx, db, toks)
	if err != nil {
		return scope{}, err
	}
	share := make(map[string]float64, len(infos))
	for _, ti := range infos {
		if ti.known && ti.df <= tierBudget {
			sc.small = true
		}
		if ti.known && n > 0 {
			share[ti.term] = min(1, float64(ti.df)/float64(n))
		}
	}
	for _, p := range scopeFields(&sc.match) {
		if *p.val == "" {
			continue
		}
		if sh := share[scopeToken(p.prefix, *p.val)]; sh > maxTokenShare {
			sc.share *= sh
			*p.val = ""
		}
	}
	return sc, nil
}

// bm25SQL scores every drawer matching its MATCH argument.
const bm25SQL = `SELECT rowid, -bm25(drawers_fts, ` + bm25Weights + `) AS score FROM drawers_fts WHERE drawers_fts MATCH ?`

// topK returns the k best rows of scoreSQL (a query of rowid and score,
// higher is better, already restricted to sc.match's scope tokens), as
// drawer ids in sc.f's scope, ties by drawer id: it depends on the files
// alone, where the rowid depends on the order they were mined in.
//
// Without date bounds, only the best rows are looked up in drawers (a
// lookup costs microseconds: the rows are large), and the scope is checked
// on them: about (k+1)/sc.share of them and a quarter more at first (so
// that the k-th in scope seldom ties the last row looked up), twice as
// many each time fewer than k of them are in scope, until k are found or
// every row has been read. The rows looked up are all those scoring above
// the last one, so k in scope above it are the k best; when the k-th in
// scope ties the last, every row of at least that score is read so that
// the smallest ids among them rank. SQLite's sort of the best few rows
// (ORDER BY ... LIMIT) costs far less than a sort of every match: with
// tens of thousands of matches, scoring them is the cost, and a full sort
// doubled it. Should that take many rounds (a scope that holds far less
// of the matches than expected), every row is read as with date bounds:
// best first (see bestFirst), until k are in scope and dated within the
// bounds.
func (s *Store) topK(ctx context.Context, db querier, scoreSQL string, args []any, sc scope, k int) ([]store.Scored, error) {
	f := sc.f
	if f.Since == "" && f.Until == "" && k > 0 {
		best := `SELECT rowid, score FROM (` + scoreSQL + `) ORDER BY score DESC LIMIT ?`
		lim := deepLimit(k, sc.share)
		for round := 0; round < maxDeepRounds; round++ {
			out, n, last, err := topRows(ctx, db, best, append(slices.Clone(args), lim), f)
			if err != nil {
				return nil, err
			}
			switch {
			case n < lim: // every row
			case len(out) < k:
				lim = satMul(lim, 2)
				continue
			case out[k-1].Score == last:
				out, _, _, err = topRows(ctx, db, `SELECT rowid, score FROM (`+scoreSQL+`) WHERE score >= ?`, append(slices.Clone(args), out[k-1].Score), f)
				if err != nil {
					return nil, err
				}
			}
			out = out[:min(k, len(out))]
			for i := range out {
				out[i].Rank = i + 1
			}
			return out, nil
		}
	}
	where, fargs := sqlq.Where(sqlq.SQLite, f, 1)
	q := bestFirst(scoreSQL, `d.id, r.score`, where) + ` ORDER BY r.score DESC, d.id LIMIT ?`
	return scored(ctx, db, q, slices.Concat(args, fargs, []any{k})...)
}

// maxDeepRounds bounds topK's rounds of looking deeper; the first round
// usually finds k in scope.
const maxDeepRounds = 4

// deepLimit is how many of the best rows topK looks up first to find k+1
// in a scope expected to hold share of them: a quarter more than expected
// to be needed, and a few, so that a scope holding a little less than
// expected rarely needs a second round, and the k-th in scope rarely ties
// the last row (scores tie often: one word once in drawers of the same
// length), which costs another query scoring every match.
func deepLimit(k int, share float64) int {
	want := (float64(k)+1)/min(max(share, 1e-9), 1)*1.25 + 8
	if want >= math.MaxInt/2 {
		return math.MaxInt / 2
	}
	return int(want)
}

// satMul is a·b for non-negative ints, at most math.MaxInt/2 (SQLite's
// LIMIT takes int64; math.MaxInt/2 is all rows).
func satMul(a, b int) int { return min(a, math.MaxInt/2/b) * b }

// topRows looks up the rows of rowsSQL (rowid and score) in drawers, best
// first, ties by id, and returns those in f's scope, how many rows there
// were and the last one's score.
func topRows(ctx context.Context, db querier, rowsSQL string, args []any, f store.Filter) (in []store.Scored, n int, last float64, err error) {
	q := `SELECT d.id, r.score, d.wing, d.room, d.agent, d.date FROM (` + rowsSQL + `) r
		JOIN drawers d ON d.rowid = r.rowid ORDER BY r.score DESC, d.id`
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var sc store.Scored
		var d store.Drawer
		if err := rows.Scan(&sc.ID, &sc.Score, &d.Wing, &d.Room, &d.Agent, &d.Date); err != nil {
			return nil, 0, 0, err
		}
		n, last = n+1, sc.Score
		if f.Matches(d) {
			in = append(in, sc)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}
	return in, n, last, nil
}

// bestFirst selects cols of scoreSQL's rows joined with their drawers and
// held to where (sqlq.Where's " AND ..." conditions on d), reading drawers
// in the order of the scores, best first. The CROSS JOIN keeps that order
// (the scored rows outside, drawers looked up by rowid), so that an ORDER
// BY r.score DESC needs no sort and a LIMIT stops the lookups: with ties
// broken by d.id as well, SQLite sorts only each run of equal scores
// ("USE TEMP B-TREE FOR LAST TERM OF ORDER BY") and stops after the run
// holding the last row it returns. The results are those of any plan. It
// sorts every row, where ORDER BY ... LIMIT keeps the best few: cheaper
// than looking each one up in drawers, dearer than the best few.
func bestFirst(scoreSQL, cols, where string) string {
	return `SELECT ` + cols + ` FROM (SELECT rowid, score FROM (` + scoreSQL + `) ORDER BY score DESC LIMIT -1) r
		CROSS JOIN drawers d ON d.rowid = r.rowid WHERE 1` + where
}

// tierBudget bounds how many drawers the rare terms of a tiered query may
// match (the sum of their document frequencies) when the whole query would
// match few more: scoring them costs a few microseconds each.
const tierBudget = 3000

// lexicalTier tries to answer from the drawers matching the rarest terms E
// alone. bm25 is a sum over terms, and one term's part is below
// (k1+1)·idf = 2.2·idf, so a drawer matching only the common terms C scores
// less than U = 2.2·Σ idf(C); and a drawer's full score is at least its E
// part. So if the k-th best E part (one cheap query over E) is above U, the
// top k all match E, and the query
//
//	(E OR C) AND E
//
// ranks exactly those drawers, scoring each at its full score plus its E
// part again (E appears twice), which a second query over E alone
// subtracts. E grows from the rarest term while it stays within budget; if
// no split is proven, ok is false and the caller runs the full query.
func (s *Store) lexicalTier(ctx context.Context, db querier, infos []termInfo, n int, sc scope, k int) (_ []store.Scored, ok bool, err error) {
	f := sc.f
	if len(infos) < 2 {
		return nil, false, nil
	}
	// Rarest first; a phrase of unknown frequency counts as rare.
	sorted := slices.Clone(infos)
	slices.SortStableFunc(sorted, func(a, b termInfo) int { return cmp.Compare(a.df, b.df) })
	total := 0
	for _, ti := range sorted {
		total += ti.df
	}
	// Worth trying while the rare terms match far fewer drawers than all
	// do (lexindex.TierPays): the probes score E's matches, and the
	// tiered query twice as many (E twice). Within that, the probes that
	// fail must not cost more than a fraction of the full query either.
	budget := max(tierBudget, total/6)
	spent := 0
	all := make([]string, len(sorted))
	for i, ti := range sorted {
		all[i] = ti.term
	}
	sum := 0
	for j := 1; j < len(sorted); j++ {
		sum += sorted[j-1].df
		if spent += sum; sum > budget || spent > 2*budget || !lexindex.TierPays(spent, 2*sum, total) {
			break
		}
		bound := 0.0
		for _, ti := range sorted[j:] {
			bound += (fts.K1 + 1) * fts.IDF(ti.df, n)
		}
		// Slack for float rounding and for a drawer count a write ahead of FTS5's.
		bound = bound*1.001 + 1e-9
		rare := all[:j]
		eExpr := matchExpr(rare, sc.match)

		// The k-th best E part. Scope tokens are enough here, and where
		// the scope has none in MATCH, the E part expected k-th in scope:
		// the bound is re-checked on the final, exactly filtered, result.
		kthSQL := `SELECT score FROM (` + bm25SQL + `) ORDER BY score DESC LIMIT 1 OFFSET ?`
		kthArgs := []any{eExpr, int(min(float64(k)/sc.share, math.MaxInt/2)) - 1}
		if f.Since != "" || f.Until != "" {
			where, fargs := sqlq.Where(sqlq.SQLite, f, 1)
			kthSQL = bestFirst(bm25SQL, `r.score`, where) + ` ORDER BY r.score DESC LIMIT 1 OFFSET ?`
			kthArgs = slices.Concat([]any{eExpr}, fargs, []any{k - 1})
		}
		var kth float64
		err := db.QueryRowContext(ctx, kthSQL, kthArgs...).Scan(&kth)
		if errors.Is(err, sql.ErrNoRows) {
			continue // fewer than k drawers match E
		}
		if err != nil {
			return nil, false, err
		}
		if kth <= bound {
			continue
		}

		// Both queries match the same rows; summing per rowid (a sort of
		// as many rows as E matches) pairs them up.
		tierSQL := `SELECT rowid, sum(score) AS score FROM (
				SELECT rowid, -score AS score FROM (` + bm25SQL + `)
				UNION ALL ` + bm25SQL + `
			) GROUP BY rowid`
		q2 := matchExpr(all, sc.match) + " AND " + matchExpr(rare, store.Filter{})
		res, err := s.topK(ctx, db, tierSQL, []any{eExpr, q2}, sc, k)
		if err != nil {
			return nil, false, err
		}
		if len(res) < k || res[k-1].Score <= bound {
			return nil, false, nil // E's k-th fell out of scope on re-check
		}
		return res, true, nil
	}
	return nil, false, nil
}

// scored runs a ranking query returning (id, score) rows, best first.
func scored(ctx context.Context, db querier, q string, args ...any) ([]store.Scored, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlq.Scored(rows)
}

// termInfo is a query term with its document frequency; known is false for
// a term the tokenizer splits into several tokens (a phrase), whose
// frequency is not in the vocabulary and is taken as 0 (rare).
type termInfo struct {
	term   string
	df     int
	known  bool
	tokens int
}

// freq is the term's document frequency as lexindex.Prune takes it: 0
// when nothing the index holds can match it, -1 when it is not known.
func (ti termInfo) freq() int {
	switch {
	case ti.tokens == 0:
		return 0
	case !ti.known:
		return -1
	}
	return ti.df
}

// termStats returns each term's document frequency, as the palace's own
// tokenizer and index see it, and the number of drawers. Counting takes a
// scan of each term's posting list (fts5vocab counts them), so both are
// cached for the generation read in db's snapshot; a term's tokens never
// change and are cached for good.
func (s *Store) termStats(ctx context.Context, db querier, terms []string) ([]termInfo, int, error) {
	gen, err := readGeneration(ctx, db)
	if err != nil {
		return nil, 0, err
	}
	c := &s.lex
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || c.gen != gen {
		c.valid = false
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM drawers`).Scan(&c.n); err != nil {
			return nil, 0, fmt.Errorf("count drawers: %w", err)
		}
		c.gen, c.df, c.valid = gen, make(map[string]int), true
	}
	if c.tokens == nil || len(c.tokens) > maxCachedTerms {
		c.tokens = make(map[string][]string)
	}
	var fresh []string
	for _, t := range terms {
		if _, ok := c.tokens[t]; !ok {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) > 0 {
		toks, err := s.tok.tokenize(ctx, fresh)
		if err != nil {
			return nil, 0, err
		}
		for i, t := range fresh {
			c.tokens[t] = append([]string{}, toks[i]...) // never nil: "no tokens" is cached too
		}
	}
	var lookup []any
	for _, t := range terms {
		if ts := c.tokens[t]; len(ts) == 1 {
			if _, ok := c.df[ts[0]]; !ok {
				lookup = append(lookup, ts[0])
			}
		}
	}
	if len(lookup) > 0 {
		if err := lookupDF(ctx, db, lookup, c.df); err != nil {
			return nil, 0, err
		}
	}
	infos := make([]termInfo, len(terms))
	for i, t := range terms {
		ts := c.tokens[t]
		infos[i] = termInfo{term: t, tokens: len(ts), known: len(ts) == 1}
		if infos[i].known {
			infos[i].df = c.df[ts[0]]
		}
	}
	return infos, c.n, nil
}

// maxCachedTerms bounds the term-to-tokens cache; past it the cache starts
// afresh.
const maxCachedTerms = 10000

// lookupDF sets df[token] for each token from the fts5vocab table (0 for a
// token the index does not hold).
func lookupDF(ctx context.Context, db querier, tokens []any, df map[string]int) error {
	rows, err := db.QueryContext(ctx, `SELECT term, doc FROM drawers_vocab WHERE term IN (?`+strings.Repeat(", ?", len(tokens)-1)+`)`, tokens...)
	if err != nil {
		return fmt.Errorf("term frequencies: %w", err)
	}
	defer rows.Close()
	found := make(map[string]int, len(tokens))
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return fmt.Errorf("term frequencies: %w", err)
		}
		found[t] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("term frequencies: %w", err)
	}
	for _, t := range tokens {
		df[t.(string)] = found[t.(string)]
	}
	return nil
}

// lexStats caches what Lexical's planning reads (see termStats).
type lexStats struct {
	mu     sync.Mutex
	valid  bool
	gen    int64
	n      int
	df     map[string]int
	tokens map[string][]string
}

// tokenizer runs text through the palace's FTS5 tokenizer (porter stemming
// included) in a private in-memory database: query terms, so that their
// document frequencies can be looked up in drawers_vocab exactly as
// indexed, and the non-ASCII text of the in-memory lexical index, which
// the Go tokenizer (fts5tok.go) leaves to SQLite.
type tokenizer struct {
	mu   sync.Mutex
	db   *sql.DB
	conn *sql.Conn
}

func (tk *tokenizer) close() error {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var err error
	if tk.conn != nil {
		err = tk.conn.Close()
		tk.conn = nil
	}
	if tk.db != nil {
		if cerr := tk.db.Close(); err == nil {
			err = cerr
		}
		tk.db = nil
	}
	return err
}

// tokenize returns the tokens of each term, in order.
func (tk *tokenizer) tokenize(ctx context.Context, terms []string) ([][]string, error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.conn == nil {
		if err := tk.openLocked(ctx); err != nil {
			return nil, fmt.Errorf("query tokenizer: %w", err)
		}
	}
	out, err := tk.runLocked(ctx, terms)
	if err != nil {
		// Start afresh next time rather than reuse a connection in an
		// unknown state.
		tk.conn.Close()
		tk.conn = nil
		return nil, fmt.Errorf("query tokenizer: %w", err)
	}
	return out, nil
}

func (tk *tokenizer) openLocked(ctx context.Context) error {
	if tk.db == nil {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		tk.db = db
	}
	conn, err := tk.db.Conn(ctx)
	if err != nil {
		return err
	}
	for _, q := range []string{
		`CREATE VIRTUAL TABLE IF NOT EXISTS tok USING fts5(t, tokenize='` + ftsTokenize + `')`,
		`CREATE VIRTUAL TABLE IF NOT EXISTS tok_i USING fts5vocab(tok, instance)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			return err
		}
	}
	tk.conn = conn
	return nil
}

func (tk *tokenizer) runLocked(ctx context.Context, terms []string) ([][]string, error) {
	args := make([]any, 0, 2*len(terms))
	for i, t := range terms {
		args = append(args, i+1, t)
	}
	if _, err := tk.conn.ExecContext(ctx, `INSERT INTO tok(rowid, t) VALUES (?, ?)`+strings.Repeat(", (?, ?)", len(terms)-1), args...); err != nil {
		return nil, err
	}
	defer tk.conn.ExecContext(context.WithoutCancel(ctx), `DELETE FROM tok`) //nolint:errcheck // next run would fail loudly
	rows, err := tk.conn.QueryContext(ctx, `SELECT doc, term FROM tok_i ORDER BY doc, offset`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([][]string, len(terms))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			return nil, err
		}
		if doc >= 1 && doc <= len(terms) {
			out[doc-1] = append(out[doc-1], term)
		}
	}
	return out, rows.Err()
}
