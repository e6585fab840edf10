package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hivemem/hivemem/internal/store"
)

// lexIndex is an in-memory copy of what FTS5's bm25 reads for drawers_fts
// (postings with per-row hit counts, row sizes, totals), so that a warm
// process ranks a query in a fraction of the time FTS5 takes: FTS5 spends
// about a microsecond per matching row looking up its size. It is only
// built in processes that ask for it (WarmLexical), in the background, and
// answers only when it reflects the palace generation a query reads; until
// then, and for anything it cannot answer exactly (a term that is a phrase
// to the tokenizer, or equals a scope token), Lexical runs on FTS5.
type lexIndex struct {
	enabled  atomic.Bool
	building atomic.Bool

	// ctx ends background builds when the store closes; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.RWMutex
	data *lexData // nil until built, or after a write it could not follow
}

// lexData is one generation's index. Rows are slots; a deleted drawer's
// slot is only marked dead (its postings stay until the next compaction),
// so a delete costs nothing per posting.
type lexData struct {
	gen int64

	rowid []int64
	ids   []string
	wing  []int32
	room  []int32
	agent []int32
	date  []int32 // dateCode
	size  []int32 // tokens in heading, text and scope: FTS5's row size
	alive []bool

	slot  map[string]int32 // live drawer id -> slot
	codes map[string]int32 // interned wing/room/agent values
	names []string         // code -> value

	post  map[string]*postings
	scope map[string]int32 // scope token -> live drawers holding it
	total int64            // tokens over live rows (FTS5's column total)
	live  int
	dead  int
}

// postings lists the slots whose heading or text hold a token, with the
// token's bm25 weight there: 2 per heading hit plus 1 per text hit (the
// weights of bm25Weights), which is the frequency bm25 uses.
type postings struct {
	slots []int32
	freq  []uint32
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
func (s *Store) WarmLexical() {
	x := &s.lexi
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ctx == nil {
		x.ctx, x.cancel = context.WithCancel(context.Background())
	}
	x.enabled.Store(true)
}

// stop ends a background build and waits for it (at Close).
func (x *lexIndex) stop() {
	x.mu.Lock()
	x.enabled.Store(false)
	if x.cancel != nil {
		x.cancel()
	}
	x.mu.Unlock()
	x.wg.Wait()
	x.mu.Lock()
	x.data = nil
	x.mu.Unlock()
}

// kick starts a background build unless one is running. Callers hold x.mu
// (either way), so that stop cannot miss a build started as it runs.
func (x *lexIndex) kick(s *Store) {
	if !x.enabled.Load() || !x.building.CompareAndSwap(false, true) {
		return
	}
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer x.building.Store(false)
		d, err := buildLex(x.ctx, s)
		if err != nil {
			return // FTS5 keeps answering; the next search tries again
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.enabled.Load() && (x.data == nil || x.data.gen < d.gen) {
			x.data = d
		}
	}()
}

// buildLex reads every drawer in one snapshot and indexes it.
func buildLex(ctx context.Context, s *Store) (*lexData, error) {
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
	d := newLexData(gen)
	var batch []lexRow
	flush := func() error {
		if err := tokenizeRows(ctx, &s.tok, batch); err != nil {
			return err
		}
		for i := range batch {
			d.add(&batch[i])
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
	d.pack()
	return d, nil
}

// pack moves every posting list into two shared arrays of exactly the size
// needed, so that a built index holds no append slack (a list that grows
// later is copied out on its first append: its capacity is its length).
func (d *lexData) pack() {
	n := 0
	for _, p := range d.post {
		n += len(p.slots)
	}
	slots, freq := make([]int32, 0, n), make([]uint32, 0, n)
	for _, p := range d.post {
		lo := len(slots)
		slots, freq = append(slots, p.slots...), append(freq, p.freq...)
		p.slots, p.freq = slots[lo:len(slots):len(slots)], freq[lo:len(freq):len(freq)]
	}
}

func newLexData(gen int64) *lexData {
	return &lexData{
		gen:   gen,
		slot:  make(map[string]int32),
		codes: make(map[string]int32),
		post:  make(map[string]*postings),
		scope: make(map[string]int32),
	}
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

func (d *lexData) code(s string) int32 {
	c, ok := d.codes[s]
	if !ok {
		c = int32(len(d.names))
		d.codes[s] = c
		d.names = append(d.names, s)
	}
	return c
}

// add indexes a tokenized row, replacing a live row of the same id.
func (d *lexData) add(r *lexRow) {
	d.remove(r.id)
	i := int32(len(d.ids))
	d.slot[r.id] = i
	d.rowid = append(d.rowid, r.rowid)
	d.ids = append(d.ids, r.id)
	d.wing = append(d.wing, d.code(r.wing))
	d.room = append(d.room, d.code(r.room))
	d.agent = append(d.agent, d.code(r.agent))
	d.date = append(d.date, dateCode(r.date))
	d.alive = append(d.alive, true)
	sc := scopeTokens(r.wing, r.room, r.agent)
	for _, t := range sc {
		d.scope[t]++
	}
	size := len(r.headToks) + len(r.textToks) + len(sc)
	d.size = append(d.size, int32(size))
	d.total += int64(size)
	d.live++
	freq := make(map[string]uint32, len(r.headToks)+len(r.textToks))
	for _, t := range r.headToks {
		freq[t] += 2
	}
	for _, t := range r.textToks {
		freq[t]++
	}
	for t, f := range freq {
		p := d.post[t]
		if p == nil {
			p = &postings{}
			d.post[t] = p
		}
		p.slots = append(p.slots, i)
		p.freq = append(p.freq, f)
	}
}

// remove marks a drawer's row dead.
func (d *lexData) remove(id string) {
	i, ok := d.slot[id]
	if !ok {
		return
	}
	delete(d.slot, id)
	d.alive[i] = false
	for _, t := range scopeTokens(d.names[d.wing[i]], d.names[d.room[i]], d.names[d.agent[i]]) {
		if d.scope[t]--; d.scope[t] == 0 {
			delete(d.scope, t)
		}
	}
	d.total -= int64(d.size[i])
	d.live--
	d.dead++
}

// compact drops dead rows once they are a large part of the index, so that
// postings do not fill up with them.
func (d *lexData) compact() {
	if d.dead < 1024 || d.dead < d.live/8 {
		return
	}
	remap := make([]int32, len(d.ids))
	n := int32(0)
	for i, ok := range d.alive {
		remap[i] = -1
		if !ok {
			continue
		}
		remap[i] = n
		d.rowid[n], d.ids[n], d.wing[n], d.room[n], d.agent[n] = d.rowid[i], d.ids[i], d.wing[i], d.room[i], d.agent[i]
		d.date[n], d.size[n], d.alive[n] = d.date[i], d.size[i], true
		d.slot[d.ids[n]] = n
		n++
	}
	d.rowid, d.ids, d.wing, d.room, d.agent = d.rowid[:n], d.ids[:n], d.wing[:n], d.room[:n], d.agent[:n]
	d.date, d.size, d.alive = d.date[:n], d.size[:n], d.alive[:n]
	for t, p := range d.post {
		j := 0
		for k, sl := range p.slots {
			if r := remap[sl]; r >= 0 {
				p.slots[j], p.freq[j] = r, p.freq[k]
				j++
			}
		}
		if j == 0 {
			delete(d.post, t)
			continue
		}
		p.slots, p.freq = p.slots[:j], p.freq[:j]
	}
	d.dead = 0
}

// df is the number of live rows whose heading or text hold t: the hit count
// FTS5's bm25 takes a term's IDF from.
func (d *lexData) df(t string) int {
	p := d.post[t]
	if p == nil {
		return 0
	}
	if d.dead == 0 {
		return len(p.slots)
	}
	n := 0
	for _, sl := range p.slots {
		if d.alive[sl] {
			n++
		}
	}
	return n
}

// follow applies a committed write that moved the palace from oldGen to
// newGen (see vecIndex.follow); text is tokenized before the lock is taken.
func (x *lexIndex) follow(tk *tokenizer, oldGen, newGen int64, delta lexDelta) {
	if !x.enabled.Load() {
		return
	}
	x.mu.RLock()
	d := x.data
	x.mu.RUnlock()
	if d == nil {
		return
	}
	err := tokenizeRows(context.Background(), tk, delta.add)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.data == nil || x.data.gen == newGen {
		return
	}
	if err != nil || delta.missed || x.data.gen != oldGen {
		x.data = nil
		return
	}
	d = x.data
	if delta.reset {
		d = newLexData(newGen)
		x.data = d
	}
	d.gen = newGen
	for _, id := range delta.remove {
		d.remove(id)
	}
	for i := range delta.add {
		d.add(&delta.add[i])
	}
	d.compact()
}

// lexicalWarm answers Lexical from the in-memory index; ok is false when
// the index cannot answer (not opted in, not built for the current
// generation, or a term it cannot score exactly), and then FTS5 must.
func (s *Store) lexicalWarm(ctx context.Context, terms []string, f store.Filter, k int) (_ []store.Scored, ok bool, err error) {
	x := &s.lexi
	if !x.enabled.Load() {
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
	x.mu.RLock()
	defer x.mu.RUnlock()
	d := x.data
	if d == nil || d.gen < gen {
		x.kick(s)
		return nil, false, nil
	}
	// The same plan as the FTS5 path (prune), so the same ranking.
	infos := make([]termInfo, len(terms))
	byTerm := make(map[string]string, len(terms))
	for i, t := range terms {
		ts := toks[i]
		if len(ts) > 1 || len(ts) == 1 && d.scope[ts[0]] > 0 {
			return nil, false, nil // a phrase, or a token scope also holds
		}
		infos[i] = termInfo{term: t, tokens: len(ts), known: len(ts) == 1}
		if infos[i].known {
			infos[i].df = d.df(ts[0])
			byTerm[t] = ts[0]
		}
	}
	infos = prune(infos, d.live)
	if len(infos) == 0 {
		return nil, true, nil
	}
	q := make([]string, len(infos))
	for i, ti := range infos {
		q[i] = byTerm[ti.term]
	}
	return d.search(q, f, k), true, nil
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

// bm25 constants as in fts5_aux.c. Variables, not constants, so that Go
// computes k1+1 in float64 as C does rather than exactly at compile time.
var (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// lexScratch is a query's per-row score accumulator, reused across
// queries.
type lexScratch struct {
	acc     []float64
	touched []int32
}

var lexScratchPool = sync.Pool{New: func() any { return &lexScratch{} }}

// search ranks the live rows in f's scope matching any of the tokens (one
// per query phrase, in query order) by FTS5's bm25 with weights
// bm25Weights, best first, ties by rowid: what topK returns for the same
// query. Callers hold the read lock.
func (d *lexData) search(tokens []string, f store.Filter, k int) []store.Scored {
	sc, ok := scopeOf(d.codes, f)
	if !ok || d.live == 0 {
		return nil
	}
	n := float64(d.live)
	avgdl := float64(d.total) / n
	k1p1 := float64(bm25K1 + 1.0)
	oneMinusB := float64(1 - bm25B)
	scr := lexScratchPool.Get().(*lexScratch)
	defer lexScratchPool.Put(scr)
	if len(scr.acc) < len(d.ids) {
		scr.acc = make([]float64, len(d.ids))
	}
	acc := scr.acc
	touched := scr.touched[:0]
	for _, t := range tokens {
		p := d.post[t]
		if p == nil {
			continue
		}
		w := idf(d.df(t), d.live)
		for j, sl := range p.slots {
			if !d.alive[sl] || !sc.all && !sc.admits(d.wing[sl], d.room[sl], d.agent[sl], d.date[sl]) {
				continue
			}
			fr := float64(p.freq[j])
			dl := float64(d.size[sl])
			den := float64(fr + float64(bm25K1*float64(oneMinusB+float64(float64(bm25B*dl)/avgdl))))
			if acc[sl] == 0 {
				touched = append(touched, sl)
			}
			acc[sl] += float64(w * float64(float64(fr*k1p1)/den))
		}
	}
	best := make([]lexHit, 0, k+1)
	worse := func(a, b lexHit) bool { // a ranks after b
		if a.score != b.score {
			return a.score < b.score
		}
		return a.rowid > b.rowid
	}
	for _, sl := range touched {
		h := lexHit{slot: sl, rowid: d.rowid[sl], score: acc[sl]}
		acc[sl] = 0
		if len(best) == k && !worse(best[k-1], h) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, h, func(a, b lexHit) int {
			if worse(a, b) {
				return 1
			}
			return -1
		})
		best = slices.Insert(best, i, h)
		if len(best) > k {
			best = best[:k]
		}
	}
	scr.touched = touched[:0]
	out := make([]store.Scored, len(best))
	for i, h := range best {
		out[i] = store.Scored{ID: d.ids[h.slot], Score: h.score, Rank: i + 1}
	}
	return out
}

type lexHit struct {
	slot  int32
	rowid int64
	score float64
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
