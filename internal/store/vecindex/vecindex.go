// Package vecindex is the exact in-memory vector index both backends search
// in their exact mode: every stored vector in one contiguous []float32 with
// the fields a filter looks at beside it, scored by the kernels. It holds
// no lock and knows nothing of generations: each backend keeps its own
// copy in step with its database (see sqlite's vecIndex and postgres's
// vecCache) and serialises access.
package vecindex

import (
	"container/heap"
	"encoding/binary"
	"errors"
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

// ParallelMin is the number of rows above which a search is split across
// GOMAXPROCS goroutines; below it the goroutine overhead is larger than the
// saving. A variable so tests can exercise the parallel path on a small
// palace.
var ParallelMin = 8192

// blockRows is how many rows are scored per DotBatch call: large enough to
// amortise the call, small enough that the scores stay in L1.
const blockRows = 512

// Index is the vectors of one palace: row i is vecs[i*dim:(i+1)*dim], with
// parallel slices of the fields a filter looks at. Strings are interned to
// int32 codes so a scope test is an integer compare, and dates are
// lexindex.DateCode values. Rows are in no particular order: a delete moves
// the last row into its place, and ties are broken by drawer id.
type Index struct {
	dim   int
	vecs  []float32
	ids   []string
	wing  []int32
	room  []int32
	agent []int32
	date  []int32 // YYYYMMDD, 0 when the drawer has no date

	pos   map[string]int // drawer id -> row
	codes lexindex.Codes // interned wing/room/agent values
}

// Row is one drawer as the index sees it.
type Row struct {
	ID, Wing, Room, Agent, Date string
	Vec                         []float32
}

// New returns an empty index of vectors of dimension dim, with room for
// about n rows.
func New(dim, n int) *Index {
	x := &Index{}
	x.Reset(dim, n)
	return x
}

// Reset empties the index and sets its dimension, keeping its memory.
func (x *Index) Reset(dim, n int) {
	x.dim = dim
	x.vecs = slices.Grow(x.vecs[:0], n*dim)
	x.ids = x.ids[:0]
	x.wing, x.room, x.agent, x.date = x.wing[:0], x.room[:0], x.agent[:0], x.date[:0]
	x.pos = make(map[string]int, n)
	x.codes = lexindex.Codes{}
}

// Dim is the dimension of the vectors.
func (x *Index) Dim() int { return x.dim }

// Len is the number of rows.
func (x *Index) Len() int { return len(x.ids) }

// row returns the row of id, appending an empty one when id is new.
func (x *Index) row(id string) (i int, existed bool) {
	i, ok := x.pos[id]
	if ok {
		return i, true
	}
	i = len(x.ids)
	x.pos[id] = i
	x.ids = append(x.ids, id)
	x.wing = append(x.wing, 0)
	x.room = append(x.room, 0)
	x.agent = append(x.agent, 0)
	x.date = append(x.date, 0)
	return i, false
}

func (x *Index) setMeta(i int, wing, room, agent, date string) {
	x.wing[i], x.room[i], x.agent[i] = x.codes.Code(wing), x.codes.Code(room), x.codes.Code(agent)
	x.date[i] = lexindex.DateCode(date)
}

// Put inserts or replaces the drawer r.ID with its vector and metadata.
func (x *Index) Put(r Row) error {
	if len(r.Vec) != x.dim {
		return fmt.Errorf("drawer %q has a vector of dimension %d, the index's is %d", r.ID, len(r.Vec), x.dim)
	}
	i, existed := x.row(r.ID)
	if existed {
		copy(x.vecs[i*x.dim:(i+1)*x.dim], r.Vec)
	} else {
		x.vecs = append(x.vecs, r.Vec...)
	}
	x.setMeta(i, r.Wing, r.Room, r.Agent, r.Date)
	return nil
}

// PutEncoded is Put with the vector as stored: little-endian float32s
// (see Encode), decoded straight into the index.
func (x *Index) PutEncoded(id, wing, room, agent, date string, blob []byte) error {
	if len(blob) != 4*x.dim {
		return fmt.Errorf("drawer %q has a %d-byte vector, want %d (dimension %d): run check", id, len(blob), 4*x.dim, x.dim)
	}
	i, existed := x.row(id)
	if existed {
		decode(x.vecs[i*x.dim:(i+1)*x.dim], blob)
	} else {
		x.vecs = AppendDecoded(x.vecs, blob)
	}
	x.setMeta(i, wing, room, agent, date)
	return nil
}

// SetMeta rewrites the metadata of a drawer in the index; one not in it
// is left out (it has no vector).
func (x *Index) SetMeta(id, wing, room, agent, date string) {
	if i, ok := x.pos[id]; ok {
		x.setMeta(i, wing, room, agent, date)
	}
}

// Remove deletes a drawer, if there, by moving the last row into its
// place, which keeps the vectors contiguous at O(dim) per delete.
func (x *Index) Remove(id string) {
	i, ok := x.pos[id]
	if !ok {
		return
	}
	delete(x.pos, id)
	last := len(x.ids) - 1
	if i != last {
		copy(x.vecs[i*x.dim:(i+1)*x.dim], x.vecs[last*x.dim:(last+1)*x.dim])
		x.ids[i] = x.ids[last]
		x.wing[i], x.room[i], x.agent[i], x.date[i] = x.wing[last], x.room[last], x.agent[last], x.date[last]
		x.pos[x.ids[i]] = i
	}
	x.vecs = x.vecs[:last*x.dim]
	x.ids = x.ids[:last]
	x.wing, x.room, x.agent, x.date = x.wing[:last], x.room[:last], x.agent[:last], x.date[:last]
}

// Row returns the drawer id as the index holds it, ok false when it is not
// in the index.
func (x *Index) Row(id string) (r Row, ok bool) {
	i, ok := x.pos[id]
	if !ok {
		return r, false
	}
	r = Row{ID: id, Wing: x.codes.Name(x.wing[i]), Room: x.codes.Name(x.room[i]), Agent: x.codes.Name(x.agent[i])}
	if d := x.date[i]; d != 0 {
		r.Date = fmt.Sprintf("%04d-%02d-%02d", d/10000, d/100%100, d%100)
	}
	r.Vec, _ = x.Vec(id)
	return r, true
}

// Vec returns a copy of the vector of drawer id, ok false when it is not
// in the index.
func (x *Index) Vec(id string) (v []float32, ok bool) {
	i, ok := x.pos[id]
	if !ok {
		return nil, false
	}
	return slices.Clone(x.vecs[i*x.dim : (i+1)*x.dim]), true
}

// Vecs is Vec of each of ids, the ones in the index (store.Vectors).
func (x *Index) Vecs(ids []string) map[string][]float32 {
	out := make(map[string][]float32, len(ids))
	for _, id := range ids {
		if v, ok := x.Vec(id); ok {
			out[id] = v
		}
	}
	return out
}

// SearchQuery is Search for a store's Vector: no results while the index
// has no dimension (no model recorded), an error for a query of another
// dimension than the model's.
func (x *Index) SearchQuery(q []float32, f store.Filter, k int) ([]store.Scored, error) {
	if x.dim == 0 {
		return nil, nil
	}
	if len(q) != x.dim {
		return nil, fmt.Errorf("query has dimension %d, the model's is %d", len(q), x.dim)
	}
	return x.Search(q, f, k), nil
}

// Check verifies the index's own invariants: the id -> row map, the
// parallel slices and the contiguous vectors agree.
func (x *Index) Check() error {
	n := len(x.ids)
	if len(x.pos) != n || len(x.wing) != n || len(x.room) != n || len(x.agent) != n || len(x.date) != n || len(x.vecs) != n*x.dim {
		return fmt.Errorf("index lengths: %d ids, %d in map, %d vector values (dim %d)", n, len(x.pos), len(x.vecs), x.dim)
	}
	for i, id := range x.ids {
		if x.pos[id] != i {
			return fmt.Errorf("row %d (%q) is mapped to row %d", i, id, x.pos[id])
		}
	}
	return nil
}

func (x *Index) in(sc *lexindex.Scope, i int) bool {
	return sc.Admits(x.wing[i], x.room[i], x.agent[i], x.date[i])
}

// Search returns the k rows in scope with the highest dot product with q
// (cosine for L2-normalised vectors), best first, ties broken by the
// smaller drawer id so results are deterministic. q must have the index's
// dimension (the caller checks, to say which model it expected).
func (x *Index) Search(q []float32, f store.Filter, k int) []store.Scored {
	n := len(x.ids)
	if n == 0 || k <= 0 || len(q) != x.dim {
		return nil
	}
	sc, ok := x.codes.Scope(f)
	if !ok {
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if n <= ParallelMin || workers < 2 {
		workers = 1
	}
	parts := make([]topK, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		parts[w] = topK{k: k, ids: x.ids}
		if workers == 1 {
			x.scan(q, &sc, lo, hi, &parts[w])
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.scan(q, &sc, lo, hi, &parts[w])
		}()
	}
	wg.Wait()
	all := parts[0].items
	for _, p := range parts[1:] {
		all = append(all, p.items...)
	}
	sort.Slice(all, func(a, b int) bool { return better(x.ids, all[a], all[b]) })
	if len(all) > k {
		all = all[:k]
	}
	out := make([]store.Scored, len(all))
	for i, it := range all {
		out[i] = store.Scored{ID: x.ids[it.row], Score: float64(it.score), Rank: i + 1}
	}
	return out
}

// scan scores rows [lo,hi) in scope into t. Runs of consecutive in-scope
// rows go to DotBatch together; rows out of scope cost one integer compare.
func (x *Index) scan(q []float32, sc *lexindex.Scope, lo, hi int, t *topK) {
	d := x.dim
	var buf [blockRows]float32
	for b := lo; b < hi; b += blockRows {
		e := min(b+blockRows, hi)
		if sc.All() {
			out := buf[:e-b]
			kernel.DotBatch(out, q, x.vecs[b*d:e*d], d)
			for j, s := range out {
				t.offer(b+j, s)
			}
			continue
		}
		for i := b; i < e; {
			if !x.in(sc, i) {
				i++
				continue
			}
			j := i + 1
			for j < e && x.in(sc, j) {
				j++
			}
			out := buf[:j-i]
			kernel.DotBatch(out, q, x.vecs[i*d:j*d], d)
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

// CheckFinite refuses a NaN or infinite component, which would poison every
// ranking it takes part in.
func CheckFinite(v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("vector component %d is %v", i, x)
		}
	}
	return nil
}

// Check validates a vector to store against the palace's recorded
// dimension (0: no model recorded yet): the dimension must match and every
// component be finite.
func Check(v []float32, dim int) error {
	if dim == 0 {
		return errors.New("no embedding model recorded: set the model before storing vectors")
	}
	if len(v) != dim {
		return fmt.Errorf("vector has dimension %d, the model's is %d", len(v), dim)
	}
	return CheckFinite(v)
}

// Encode is v as stored by both backends: little-endian float32s.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// AppendDecoded decodes the little-endian float32s in b onto dst.
func AppendDecoded(dst []float32, b []byte) []float32 {
	n := len(b) / 4
	off := len(dst)
	dst = slices.Grow(dst, n)[:off+n]
	decode(dst[off:], b)
	return dst
}

// decode fills dst from the little-endian float32s in b.
func decode(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}
