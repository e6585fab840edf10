package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/lexindex"
)

// parallelMin is the number of candidate rows above which a scan is split
// across GOMAXPROCS goroutines; below it the goroutine overhead is larger
// than the saving. A variable so tests can exercise the parallel path on a
// small palace.
var parallelMin = 8192

// blockRows is how many rows are scored per DotBatch call: large enough to
// amortise the call, small enough that the scores stay in L1.
const blockRows = 512

// vecIndex is the in-memory copy of every stored vector, so that an exact
// scan never touches SQLite: one contiguous []float32 (row i is
// vecs[i*dim:(i+1)*dim]) and parallel slices of the fields a filter looks
// at. Strings are interned to int32 codes so a scope test is an integer
// compare. It is loaded lazily, updated in place by this process's own
// writes, and reloaded when the palace generation shows another process
// wrote.
type vecIndex struct {
	mu     sync.RWMutex
	loaded bool
	gen    int64 // palace generation the contents reflect
	dim    int
	model  string // the palace's model at gen

	vecs  []float32
	ids   []string
	wing  []int32
	room  []int32
	agent []int32
	date  []int32 // YYYYMMDD, 0 when the drawer has no date

	pos   map[string]int   // drawer id -> row
	codes map[string]int32 // interned wing/room/agent values
}

// vecRow is one drawer as the index sees it. vec is nil in a metadata-only
// change.
type vecRow struct {
	id, wing, room, agent, date string
	vec                         []float32
}

// vecDelta is what one committed write transaction did to the vectors (and
// to the full-text index), so the in-memory indexes can follow it without a
// reload.
type vecDelta struct {
	clear  bool     // every vector dropped (ClearVectors, Reset)
	dim    int      // new model dimension when > 0
	model  string   // with dim: the new model
	remove []string // drawers deleted
	upsert []vecRow // drawers that now have this vector
	meta   []vecRow // drawers whose metadata changed (only matter if cached)
	lex    lexDelta // what the write did to the full-text index
}

// dateCode packs YYYY-MM-DD into an int32 that sorts like the string (the
// lexical index's encoding, shared so that both indexes filter alike).
func dateCode(s string) int32 { return lexindex.DateCode(s) }

// code interns s; callers hold the write lock.
func (v *vecIndex) code(s string) int32 {
	c, ok := v.codes[s]
	if !ok {
		c = int32(len(v.codes))
		v.codes[s] = c
	}
	return c
}

func (v *vecIndex) resetLocked(dim int) {
	v.dim = dim
	v.vecs = v.vecs[:0]
	v.ids = v.ids[:0]
	v.wing, v.room, v.agent, v.date = v.wing[:0], v.room[:0], v.agent[:0], v.date[:0]
	v.pos = make(map[string]int)
	v.codes = make(map[string]int32)
}

// invalidate forgets everything; the next search reloads.
func (v *vecIndex) invalidate() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
	v.vecs, v.ids, v.wing, v.room, v.agent, v.date = nil, nil, nil, nil, nil, nil
	v.pos, v.codes = nil, nil
}

// follow applies the delta of a write that moved the palace from generation
// oldGen to newGen. If the index reflects some other generation (another
// process wrote in between) it is dropped and reloaded on the next search;
// if it already reflects newGen (a search reloaded after the commit) there
// is nothing to do.
func (v *vecIndex) follow(oldGen, newGen int64, d vecDelta) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.loaded || v.gen == newGen {
		return
	}
	if v.gen != oldGen {
		v.loaded = false
		return
	}
	v.gen = newGen
	if d.clear {
		v.resetLocked(v.dim)
	}
	if d.dim > 0 {
		v.dim, v.model = d.dim, d.model
	}
	for _, id := range d.remove {
		v.removeLocked(id)
	}
	for _, r := range d.upsert {
		if len(r.vec) != v.dim {
			// Cannot happen: writes are checked against the model. Be safe.
			v.loaded = false
			return
		}
		v.putLocked(r)
	}
	for _, r := range d.meta {
		if i, ok := v.pos[r.id]; ok {
			v.wing[i], v.room[i], v.agent[i] = v.code(r.wing), v.code(r.room), v.code(r.agent)
			v.date[i] = dateCode(r.date)
		}
	}
}

func (v *vecIndex) putLocked(r vecRow) {
	i, ok := v.pos[r.id]
	if !ok {
		i = len(v.ids)
		v.pos[r.id] = i
		v.ids = append(v.ids, r.id)
		v.wing = append(v.wing, 0)
		v.room = append(v.room, 0)
		v.agent = append(v.agent, 0)
		v.date = append(v.date, 0)
		v.vecs = append(v.vecs, r.vec...)
	} else {
		copy(v.vecs[i*v.dim:(i+1)*v.dim], r.vec)
	}
	v.wing[i], v.room[i], v.agent[i] = v.code(r.wing), v.code(r.room), v.code(r.agent)
	v.date[i] = dateCode(r.date)
}

// removeLocked deletes a row by moving the last row into its place, which
// keeps the vectors contiguous at O(dim) per delete.
func (v *vecIndex) removeLocked(id string) {
	i, ok := v.pos[id]
	if !ok {
		return
	}
	delete(v.pos, id)
	last := len(v.ids) - 1
	if i != last {
		copy(v.vecs[i*v.dim:(i+1)*v.dim], v.vecs[last*v.dim:(last+1)*v.dim])
		v.ids[i] = v.ids[last]
		v.wing[i], v.room[i], v.agent[i], v.date[i] = v.wing[last], v.room[last], v.agent[last], v.date[last]
		v.pos[v.ids[i]] = i
	}
	v.vecs = v.vecs[:last*v.dim]
	v.ids = v.ids[:last]
	v.wing, v.room, v.agent, v.date = v.wing[:last], v.room[:last], v.agent[:last], v.date[:last]
}

// load reads every vector in one read transaction, so that the generation
// and the rows come from one snapshot. (Reading rowid ranges on several
// connections at once measured no faster on a busy 2-core machine, and
// needs the vectors twice in memory while they are joined.)
func (v *vecIndex) load(ctx context.Context, db *sql.DB) error {
	var n int
	if err := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // read-only
		n, err = countVectors(ctx, tx)
		return err
	}(); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	p, err := loadRange(ctx, db, n, math.MinInt64, math.MaxInt64)
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	total := len(p.ids)
	v.resetLocked(p.dim)
	v.vecs = p.vecs
	v.ids = p.ids
	v.wing, v.room, v.agent = make([]int32, total), make([]int32, total), make([]int32, total)
	v.date = p.date
	v.pos = make(map[string]int, total)
	for i, id := range p.ids {
		v.pos[id] = i
		v.wing[i], v.room[i], v.agent[i] = v.code(p.wing[i]), v.code(p.room[i]), v.code(p.agent[i])
	}
	v.gen, v.model = p.gen, p.model
	v.loaded = true
	return nil
}

// loadedPart is the drawers with vectors of one rowid range.
type loadedPart struct {
	gen   int64
	model string
	dim   int
	vecs  []float32
	ids   []string
	wing  []string
	room  []string
	agent []string
	date  []int32
}

// loadRange reads the vectors of drawers with rowid in [from, to] in one
// read transaction. Raw bytes avoid a copy of every blob and string.
func loadRange(ctx context.Context, db *sql.DB, sizeHint int, from, to int64) (loadedPart, error) {
	var p loadedPart
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return p, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	if p.gen, err = readGeneration(ctx, tx); err != nil {
		return p, err
	}
	if p.model, p.dim, err = readModel(ctx, tx); err != nil {
		return p, err
	}
	dim := p.dim
	p.vecs = make([]float32, 0, sizeHint*dim)
	rows, err := tx.QueryContext(ctx, `SELECT id, wing, room, agent, date, vector FROM drawers
		WHERE vector IS NOT NULL AND rowid BETWEEN ? AND ? ORDER BY rowid`, from, to)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	var id, wing, room, agent, date, blob sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &wing, &room, &agent, &date, &blob); err != nil {
			return p, err
		}
		if len(blob) != dim*4 {
			return p, fmt.Errorf("drawer %q has a %d-byte vector, want %d (dimension %d): run check", id, len(blob), dim*4, dim)
		}
		p.ids = append(p.ids, string(id))
		p.wing = append(p.wing, string(wing))
		p.room = append(p.room, string(room))
		p.agent = append(p.agent, string(agent))
		p.date = append(p.date, dateCode(string(date)))
		p.vecs = appendVector(p.vecs, blob)
	}
	return p, rows.Err()
}

// scope is a Filter translated to the index's codes.
type scope = lexindex.Scope

// scopeFor translates f; ok is false when a named value was never seen, so
// nothing can match.
func (v *vecIndex) scopeFor(f store.Filter) (sc scope, ok bool) {
	return lexindex.ScopeOf(v.codes, f)
}

func (v *vecIndex) in(sc *scope, i int) bool {
	return sc.Admits(v.wing[i], v.room[i], v.agent[i], v.date[i])
}

// search returns the k rows in scope with the highest dot product with q,
// best first (ties broken by id so results are deterministic). Callers hold
// the read lock.
func (v *vecIndex) search(q []float32, f store.Filter, k int) []store.Scored {
	n := len(v.ids)
	if n == 0 || k <= 0 {
		return nil
	}
	sc, ok := v.scopeFor(f)
	if !ok {
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if n <= parallelMin || workers < 2 {
		workers = 1
	}
	parts := make([]topK, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		parts[w] = topK{k: k, ids: v.ids}
		if workers == 1 {
			v.scan(q, &sc, lo, hi, &parts[w])
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.scan(q, &sc, lo, hi, &parts[w])
		}()
	}
	wg.Wait()
	all := parts[0].items
	for _, p := range parts[1:] {
		all = append(all, p.items...)
	}
	sort.Slice(all, func(a, b int) bool { return better(v.ids, all[a], all[b]) })
	if len(all) > k {
		all = all[:k]
	}
	out := make([]store.Scored, len(all))
	for i, it := range all {
		out[i] = store.Scored{ID: v.ids[it.row], Score: float64(it.score), Rank: i + 1}
	}
	return out
}

// scan scores rows [lo,hi) in scope into t. Runs of consecutive in-scope
// rows go to DotBatch together; rows out of scope cost one integer compare.
func (v *vecIndex) scan(q []float32, sc *scope, lo, hi int, t *topK) {
	d := v.dim
	var buf [blockRows]float32
	for b := lo; b < hi; b += blockRows {
		e := min(b+blockRows, hi)
		if sc.All() {
			out := buf[:e-b]
			kernel.DotBatch(out, q, v.vecs[b*d:e*d], d)
			for j, s := range out {
				t.offer(b+j, s)
			}
			continue
		}
		for i := b; i < e; {
			if !v.in(sc, i) {
				i++
				continue
			}
			j := i + 1
			for j < e && v.in(sc, j) {
				j++
			}
			out := buf[:j-i]
			kernel.DotBatch(out, q, v.vecs[i*d:j*d], d)
			for m, s := range out {
				t.offer(i+m, s)
			}
			i = j
		}
	}
}

type hit struct {
	row   int
	score float32
}

// better orders hits best first: higher score, then smaller id.
func better(ids []string, a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ids[a.row] < ids[b.row]
}

// topK keeps the k best hits in a min-heap (worst on top), so most rows are
// rejected with one comparison against the current worst.
type topK struct {
	k     int
	ids   []string
	items []hit
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(a, b int) bool { return better(t.ids, t.items[b], t.items[a]) }
func (t *topK) Swap(a, b int)      { t.items[a], t.items[b] = t.items[b], t.items[a] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(hit)) }
func (t *topK) Pop() any {
	last := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return last
}

func (t *topK) offer(row int, score float32) {
	h := hit{row: row, score: score}
	if len(t.items) < t.k {
		heap.Push(t, h)
		return
	}
	if worst := t.items[0]; score < worst.score || !better(t.ids, h, worst) {
		return
	}
	t.items[0] = h
	heap.Fix(t, 0)
}

// encodeVector stores v as little-endian float32, refusing values that
// would poison every ranking they take part in.
func encodeVector(v []float32) ([]byte, error) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("vector component %d is %v", i, x)
		}
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b, nil
}

// appendVector decodes a little-endian float32 blob onto dst.
func appendVector(dst []float32, b []byte) []float32 {
	n := len(b) / 4
	off := len(dst)
	dst = slices.Grow(dst, n)[:off+n]
	out := dst[off:]
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst
}
