// Package lexindex is the in-memory BM25 index that long-running processes
// of either backend keep warm: postings with per-row frequencies, row sizes
// and totals, exactly what FTS5's bm25 reads, so that a query is ranked in
// a fraction of the time the database takes (FTS5, or PostgreSQL's GIN
// matches, cost about a microsecond per matching row). It ranks exactly as
// the SQLite palace's FTS5 path does (bm25 with internal/store/fts's
// constants; ties by drawer id, which depends on the files alone, not on
// the order they were mined in). Each backend feeds it rows (tokens already
// counted) and decides when it is current; this package only indexes and
// ranks, and is not safe for concurrent use (callers lock).
package lexindex

import (
	"slices"
	"sync"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/fts"
)

// Row is a drawer as the index sees it.
type Row struct {
	Rowid                       int64 // the row's key in the backend
	ID, Wing, Room, Agent, Date string
	Size                        int      // the row size bm25 normalises by
	Terms                       []string // distinct scored tokens
	Freq                        []uint32 // their bm25 frequencies (weights applied)
}

// Index is one palace generation's index. Rows are slots; a deleted
// drawer's slot is only marked dead (its postings stay until the next
// compaction), so a delete costs nothing per posting.
type Index struct {
	Gen int64 // the palace generation the index reflects (the caller's to keep)

	scopeToks func(wing, room, agent string) []string

	rowid []int64
	ids   []string
	wing  []int32
	room  []int32
	agent []int32
	date  []int32 // DateCode
	size  []int32
	alive []bool

	slot  map[string]int32 // live drawer id -> slot
	codes Codes            // interned wing/room/agent values

	post  map[string]*postings
	scope map[string]int32 // scope token -> live drawers holding it
	total int64            // size over live rows (bm25's column total)
	live  int
	dead  int
}

// postings lists the slots whose scored text holds a token, with its
// frequency there.
type postings struct {
	slots []int32
	freq  []uint32
}

// New returns an empty index at generation gen. scopeTokens, if not nil,
// gives the tokens a row holds outside its scored text (the SQLite palace's
// scope column): they are only counted, so that the caller can tell
// (HasScope) when a query token would also match them and the index cannot
// answer exactly.
func New(gen int64, scopeTokens func(wing, room, agent string) []string) *Index {
	return &Index{
		Gen:       gen,
		scopeToks: scopeTokens,
		slot:      make(map[string]int32),
		post:      make(map[string]*postings),
		scope:     make(map[string]int32),
	}
}

// Live is the number of drawers indexed.
func (d *Index) Live() int { return d.live }

// Total is the sum of the live rows' sizes.
func (d *Index) Total() int64 { return d.total }

// Slots is the number of slots in use, dead ones included (for tests).
func (d *Index) Slots() int { return len(d.ids) }

// Dead is the number of dead slots not yet compacted.
func (d *Index) Dead() int { return d.dead }

// HasScope reports whether a live row holds t outside its scored text.
func (d *Index) HasScope(t string) bool { return d.scope[t] > 0 }

// Pack moves every posting list into two shared arrays of exactly the size
// needed, so that a built index holds no append slack (a list that grows
// later is copied out on its first append: its capacity is its length).
func (d *Index) Pack() {
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

func (d *Index) code(s string) int32 { return d.codes.Code(s) }

// Add indexes a row, replacing a live row of the same id.
func (d *Index) Add(r *Row) {
	d.Remove(r.ID)
	i := int32(len(d.ids))
	d.slot[r.ID] = i
	d.rowid = append(d.rowid, r.Rowid)
	d.ids = append(d.ids, r.ID)
	d.wing = append(d.wing, d.code(r.Wing))
	d.room = append(d.room, d.code(r.Room))
	d.agent = append(d.agent, d.code(r.Agent))
	d.date = append(d.date, DateCode(r.Date))
	d.alive = append(d.alive, true)
	if d.scopeToks != nil {
		for _, t := range d.scopeToks(r.Wing, r.Room, r.Agent) {
			d.scope[t]++
		}
	}
	d.size = append(d.size, int32(r.Size))
	d.total += int64(r.Size)
	d.live++
	for j, t := range r.Terms {
		p := d.post[t]
		if p == nil {
			p = &postings{}
			d.post[t] = p
		}
		p.slots = append(p.slots, i)
		p.freq = append(p.freq, r.Freq[j])
	}
}

// Remove marks a drawer's row dead, if indexed.
func (d *Index) Remove(id string) {
	i, ok := d.slot[id]
	if !ok {
		return
	}
	delete(d.slot, id)
	d.alive[i] = false
	if d.scopeToks != nil {
		for _, t := range d.scopeToks(d.codes.Name(d.wing[i]), d.codes.Name(d.room[i]), d.codes.Name(d.agent[i])) {
			if d.scope[t]--; d.scope[t] == 0 {
				delete(d.scope, t)
			}
		}
	}
	d.total -= int64(d.size[i])
	d.live--
	d.dead++
}

// Compact drops dead rows once they are a large part of the index, so that
// postings do not fill up with them.
func (d *Index) Compact() {
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

// DF is the number of live rows whose scored text holds t: the count bm25
// takes a term's IDF from.
func (d *Index) DF(t string) int {
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

// scratch is a query's per-row score accumulator, reused across queries.
type scratch struct {
	acc     []float64
	touched []int32
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// Search ranks the live rows in f's scope matching any of tokens (one per
// query phrase, in query order; a repeated token counts again, as FTS5 sums
// per phrase) by FTS5's bm25, best first, ties by rowid, and returns the
// best k.
func (d *Index) Search(tokens []string, f store.Filter, k int) []store.Scored {
	sc, ok := d.codes.Scope(f)
	if !ok || d.live == 0 || k <= 0 {
		return nil
	}
	n := float64(d.live)
	avgdl := float64(d.total) / n
	k1p1 := float64(fts.K1 + 1.0)
	oneMinusB := float64(1 - fts.B)
	scr := scratchPool.Get().(*scratch)
	defer scratchPool.Put(scr)
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
		w := fts.IDF(d.DF(t), d.live)
		for j, sl := range p.slots {
			if !d.alive[sl] || !sc.all && !sc.Admits(d.wing[sl], d.room[sl], d.agent[sl], d.date[sl]) {
				continue
			}
			fr := float64(p.freq[j])
			dl := float64(d.size[sl])
			// Parenthesised and converted as fts5_aux.c computes it, so
			// that the rounding is the same.
			den := float64(fr + float64(fts.K1*float64(oneMinusB+float64(float64(fts.B*dl)/avgdl))))
			if acc[sl] == 0 {
				touched = append(touched, sl)
			}
			acc[sl] += float64(w * float64(float64(fr*k1p1)/den))
		}
	}
	// No more than the touched rows can rank: k comes from configuration
	// and may be far larger (or MaxInt, where k+1 would overflow).
	k = min(k, len(touched))
	if k == 0 {
		scr.touched = touched[:0]
		return nil
	}
	best := make([]hit, 0, k+1)
	worse := func(a, b hit) bool { // a ranks after b
		if a.score != b.score {
			return a.score < b.score
		}
		return d.ids[a.slot] > d.ids[b.slot]
	}
	for _, sl := range touched {
		h := hit{slot: sl, score: acc[sl]}
		acc[sl] = 0
		if len(best) == k && !worse(best[k-1], h) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, h, func(a, b hit) int {
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

type hit struct {
	slot  int32
	score float64
}

// Prune is the query plan both backends rank by: it drops the terms no
// drawer holds and, when rarer ones remain, the terms in at least half of
// the n drawers: their IDF is clamped to 1e-6, so they change no ranking,
// yet they would make the query score most of the palace. df is a term's
// document frequency, or -1 when it is not known (a phrase, taken as rare).
func Prune[T any](terms []T, n int, df func(T) int) []T {
	var rare, common []T
	for _, t := range terms {
		switch c := df(t); {
		case c == 0:
			// Nothing the index holds: no match possible.
		case c > 0 && 2*c >= n:
			common = append(common, t)
		default:
			rare = append(rare, t)
		}
	}
	if len(rare) > 0 {
		return rare
	}
	return common
}

// TierPays is when both backends' rare-terms tiers are worth trying: a
// first pass over the query's rarest terms, which must prove its answer
// exact or leave the full query to run after it, is tried while the
// drawers its probes so far and its final query score (probes, final)
// come to at most half of those the full query scores (all, the sum of
// the terms' document frequencies). Success then at least halves the
// work, and failure adds at most half; when every query word is about as
// rare as the others, the probes would cost about as much as the full
// query and seldom prove anything.
func TierPays(probes, final, all int) bool { return probes+final <= all/2 }

// DateCode packs YYYY-MM-DD into an int32 that sorts like the string; it is
// 0 for anything else (undated).
func DateCode(s string) int32 {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0
	}
	var n int32
	for i := 0; i < 10; i++ {
		if i == 4 || i == 7 {
			continue
		}
		c := s[i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int32(c-'0')
	}
	return n
}

// Scope is a store.Filter over interned wing/room/agent codes and
// DateCode dates.
type Scope struct {
	all               bool
	wing, room, agent int32 // -1: any
	since, until      int32 // 0: unbounded
	dated             bool  // a date bound is set, so undated rows are out
}

// All reports whether the scope admits every row.
func (sc *Scope) All() bool { return sc.all }

// Codes interns wing, room and agent values as int32 codes, in order of
// first sight, so that a scope test is an integer compare. The zero value
// is empty and ready.
type Codes struct {
	code  map[string]int32
	names []string // code -> value
}

// Code returns s's code, interning it when new.
func (c *Codes) Code(s string) int32 {
	n, ok := c.code[s]
	if !ok {
		if c.code == nil {
			c.code = make(map[string]int32)
		}
		n = int32(len(c.names))
		c.code[s] = n
		c.names = append(c.names, s)
	}
	return n
}

// Name is the value of a code.
func (c *Codes) Name(n int32) string { return c.names[n] }

// Scope translates f to these codes; ok is false when a named value was
// never seen, so nothing can match.
func (c *Codes) Scope(f store.Filter) (sc Scope, ok bool) { return ScopeOf(c.code, f) }

// ScopeOf translates f with the interned values codes; ok is false when a
// named value was never seen, so nothing can match.
func ScopeOf(codes map[string]int32, f store.Filter) (sc Scope, ok bool) {
	sc = Scope{wing: -1, room: -1, agent: -1, since: DateCode(f.Since), until: DateCode(f.Until)}
	sc.dated = f.Since != "" || f.Until != ""
	for _, p := range []struct {
		val string
		dst *int32
	}{{f.Wing, &sc.wing}, {f.Room, &sc.room}, {f.Agent, &sc.agent}} {
		if p.val == "" {
			continue
		}
		c, found := codes[p.val]
		if !found {
			return sc, false
		}
		*p.dst = c
	}
	sc.all = sc.wing < 0 && sc.room < 0 && sc.agent < 0 && !sc.dated
	return sc, true
}

// Admits reports whether a row with these codes is in scope.
func (sc *Scope) Admits(wing, room, agent, date int32) bool {
	if sc.wing >= 0 && wing != sc.wing ||
		sc.room >= 0 && room != sc.room ||
		sc.agent >= 0 && agent != sc.agent {
		return false
	}
	return !sc.dated || date != 0 && (sc.since == 0 || date >= sc.since) && (sc.until == 0 || date <= sc.until)
}
