package lexindex_test

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/fts"
	"github.com/hivemem/hivemem/internal/store/lexindex"
)

// doc is a drawer as these tests write it. The index is fed the row the
// SQLite palace would derive from it (see count); the reference scores it
// by brute force.
type doc struct {
	rowid                       int64
	id, wing, room, agent, date string
	heading, text               string
}

// scopeTokens stands in for the SQLite palace's scope column: tokens a row
// holds outside its scored text, which fts.Tokens never produces.
func scopeTokens(wing, room, agent string) []string {
	return []string{"w:" + wing, "r:" + room, "a:" + agent}
}

// counted is a doc as FTS5's bm25 reads it: each token's frequency with the
// column weights applied, and the row size (scope tokens included, as in
// the palace).
type counted struct {
	freq map[string]uint32
	size int
}

func count(d doc) counted {
	head, text := fts.Tokens(d.heading), fts.Tokens(d.text)
	c := counted{freq: make(map[string]uint32), size: len(head) + len(text) + len(scopeTokens(d.wing, d.room, d.agent))}
	for _, t := range head {
		c.freq[t] += fts.HeadingWeight
	}
	for _, t := range text {
		c.freq[t] += fts.TextWeight
	}
	return c
}

// row is d as the index takes it.
func (d doc) row() *lexindex.Row {
	c := count(d)
	r := &lexindex.Row{
		Rowid: d.rowid, ID: d.id, Wing: d.wing, Room: d.room, Agent: d.agent, Date: d.date,
		Size:  c.size,
		Terms: slices.Sorted(maps.Keys(c.freq)),
	}
	for _, t := range r.Terms {
		r.Freq = append(r.Freq, c.freq[t])
	}
	return r
}

// model is the reference: the live docs, ranked by brute force.
type model struct {
	docs   map[string]doc
	cnt    map[string]counted
	scopes map[string]bool // every scope token any doc ever held
}

func newModel() *model {
	return &model{docs: make(map[string]doc), cnt: make(map[string]counted), scopes: make(map[string]bool)}
}

// add indexes d in both the model and idx (replacing a doc of the same id).
func (m *model) add(idx *lexindex.Index, d doc) {
	m.docs[d.id] = d
	m.cnt[d.id] = count(d)
	for _, s := range scopeTokens(d.wing, d.room, d.agent) {
		m.scopes[s] = true
	}
	idx.Add(d.row())
}

// remove drops id from both the model and idx.
func (m *model) remove(idx *lexindex.Index, id string) {
	delete(m.docs, id)
	delete(m.cnt, id)
	idx.Remove(id)
}

func (m *model) total() int64 {
	var n int64
	for _, c := range m.cnt {
		n += int64(c.size)
	}
	return n
}

func (m *model) df(t string) int {
	n := 0
	for _, c := range m.cnt {
		if c.freq[t] > 0 {
			n++
		}
	}
	return n
}

// bm25Term is one phrase's share of fts5_aux.c's bm25,
//
//	idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))
//
// with every product rounded on its own, as C does (the conversions forbid
// Go to fuse a multiply and an add).
func bm25Term(idf, f, dl, avgdl float64) float64 {
	norm := float64(fts.K1 * float64(1-fts.B+float64(fts.B*dl)/avgdl))
	return float64(idf * (float64(f*float64(fts.K1+1)) / (f + norm)))
}

// rank is every live doc in f's scope holding any query token, scored as
// FTS5 scores a query of one phrase per token (statistics over all live
// docs, whatever the filter), best first, ties by drawer id.
func (m *model) rank(query []string, f store.Filter) []store.Scored {
	n := len(m.docs)
	if n == 0 {
		return nil
	}
	avgdl := float64(m.total()) / float64(n)
	idf := make(map[string]float64)
	for _, t := range query {
		idf[t] = fts.IDF(m.df(t), n)
	}
	type hit struct {
		id    string
		score float64
	}
	var hits []hit
	for id, d := range m.docs {
		if !f.Matches(store.Drawer{Wing: d.wing, Room: d.room, Agent: d.agent, Date: d.date}) {
			continue
		}
		c := m.cnt[id]
		score, matched := 0.0, false
		for _, t := range query {
			if fr := c.freq[t]; fr > 0 {
				matched = true
				score += bm25Term(idf[t], float64(fr), float64(c.size), avgdl)
			}
		}
		if matched {
			hits = append(hits, hit{id, score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	out := make([]store.Scored, len(hits))
	for i, h := range hits {
		out[i] = store.Scored{ID: h.id, Score: h.score, Rank: i + 1}
	}
	return out
}

// checkSearch compares idx's best k with the reference's for each k.
func checkSearch(t *testing.T, idx *lexindex.Index, m *model, query []string, f store.Filter, ks ...int) {
	t.Helper()
	want := m.rank(query, f)
	for _, k := range ks {
		got := idx.Search(query, f, k)
		if w := want[:min(k, len(want))]; !slices.Equal(got, w) {
			t.Errorf("Search(%q, %+v, k=%d):\n got %v\nwant %v", query, f, k, got, w)
		}
	}
}

// checkStats compares idx's counts with the model's: live rows, total size,
// each token's DF and each scope token's presence.
func checkStats(t *testing.T, idx *lexindex.Index, m *model, tokens []string) {
	t.Helper()
	if idx.Live() != len(m.docs) {
		t.Errorf("Live() = %d, want %d", idx.Live(), len(m.docs))
	}
	if got, want := idx.Total(), m.total(); got != want {
		t.Errorf("Total() = %d, want %d", got, want)
	}
	if idx.Slots() != idx.Live()+idx.Dead() {
		t.Errorf("Slots() = %d, want Live()+Dead() = %d+%d", idx.Slots(), idx.Live(), idx.Dead())
	}
	for _, tok := range tokens {
		if got, want := idx.DF(tok), m.df(tok); got != want {
			t.Errorf("DF(%q) = %d, want %d", tok, got, want)
		}
	}
	held := make(map[string]bool)
	for _, d := range m.docs {
		for _, s := range scopeTokens(d.wing, d.room, d.agent) {
			held[s] = true
		}
	}
	for s := range m.scopes {
		if idx.HasScope(s) != held[s] {
			t.Errorf("HasScope(%q) = %v, want %v", s, idx.HasScope(s), held[s])
		}
	}
}

func handDocs() []doc {
	return []doc{
		{10, "a", "work", "notes", "alice", "2024-01-05", "Deploy plan", "deploy the service to production on friday"},
		{3, "b", "work", "notes", "bob", "2024-02-10", "Database migration", "migrate the database schema; deploy after the migration"},
		{7, "c", "home", "garden", "alice", "", "Tomatoes", "water the tomatoes every morning"},
		{5, "d", "home", "kitchen", "bob", "2023-12-31", "Bread", "bake bread with a sourdough starter"},
		// e is a copy of a with a lower rowid, added later: a (the smaller
		// id) must still rank first on every query both match.
		{2, "e", "work", "ops", "carol", "2024-01-05", "Deploy plan", "deploy the service to production on friday"},
		{1, "f", "work", "ops", "alice", "2024-03-01", "", "production incident: the database was down; restart the database"},
		{20, "g", "home", "garden", "carol", "2024-01-31", "Deploy the sprinkler", "garden sprinkler deploy"},
		{4, "h", "archive", "notes", "bob", "2022-06-15", "Old deploy notes", "deployed deploying deploys"},
	}
}

var handQueries = []string{
	"deploy", // in more than half the rows: IDF clamped to 1e-6
	"database",
	"deploy database",
	"database database", // a repeated phrase counts twice
	"tomatoes garden",
	"friday production",
	"sourdough",
	"zebra",
	"zebra database",
	"",
	"deploy sprinkler garden database bread notes",
}

var handFilters = []store.Filter{
	{},
	{Wing: "work"},
	{Wing: "home", Room: "garden"},
	{Agent: "alice"},
	{Room: "notes", Agent: "bob"},
	{Since: "2024-01-05"},
	{Until: "2024-01-05"},
	{Since: "2024-01-01", Until: "2024-01-31"},
	{Wing: "work", Since: "2024-02-10", Until: "2024-02-10"},
	{Since: "2030-01-01"},
	{Until: "2000-01-01"},
	{Wing: "nowhere"},
	{Room: "nowhere"},
	{Agent: "dave"},
	{Wing: "work", Agent: "dave"},
	{Wing: "alice"},  // a known value, but an agent's, not a wing's
	{Room: "garden"}, // known as a room
}

func TestSearchHandCorpus(t *testing.T) {
	idx, m := lexindex.New(1, scopeTokens), newModel()
	for _, d := range handDocs() {
		m.add(idx, d)
	}
	var vocab []string
	for _, d := range handDocs() {
		vocab = append(vocab, fts.Tokens(d.heading+" "+d.text)...)
	}
	vocab = append(vocab, "zebra")
	check := func(t *testing.T) {
		checkStats(t, idx, m, vocab)
		for _, q := range handQueries {
			for _, f := range handFilters {
				checkSearch(t, idx, m, fts.Tokens(q), f, 1, 2, 3, len(handDocs()), 100)
			}
		}
	}
	t.Run("fresh", check)

	t.Run("explicit", func(t *testing.T) {
		// Independent of the reference: the copies a and e tie, and a's
		// smaller id puts it first, whatever their rowids.
		got := idx.Search(fts.Tokens("friday"), store.Filter{}, 10)
		if len(got) != 2 || got[0].ID != "a" || got[1].ID != "e" || got[0].Score != got[1].Score || got[0].Score <= 0 ||
			got[0].Rank != 1 || got[1].Rank != 2 {
			t.Errorf("Search(friday) = %v, want a then e, tied", got)
		}
		if got := idx.Search(fts.Tokens("sourdough"), store.Filter{}, 10); len(got) != 1 || got[0].ID != "d" {
			t.Errorf("Search(sourdough) = %v, want d", got)
		}
		if got := idx.Search(fts.Tokens("sourdough"), store.Filter{Wing: "nowhere"}, 10); len(got) != 0 {
			t.Errorf("unknown wing: Search = %v, want nothing", got)
		}
		// The date bounds are inclusive, and undated c is out of any range;
		// g's "deploy" counts as often as a's and e's in a shorter row.
		got = idx.Search(fts.Tokens("deploy tomatoes"), store.Filter{Since: "2024-01-05", Until: "2024-01-31"}, 10)
		if ids := scoredIDs(got); !slices.Equal(ids, []string{"g", "a", "e"}) {
			t.Errorf("dated Search = %v, want g, a, e", got)
		}
	})

	// Writes: a delete, a replacement that moves a drawer, a new drawer.
	m.remove(idx, "b")
	m.add(idx, doc{30, "c", "work", "ops", "dave", "2024-01-20", "Database tomatoes", "the tomatoes database is down"})
	m.add(idx, doc{8, "i", "home", "kitchen", "alice", "2024-01-05", "Bread again", "sourdough bread bread bread"})
	if idx.Dead() != 2 || idx.Slots() != 10 || idx.Live() != 8 {
		t.Errorf("after writes: Dead, Slots, Live = %d, %d, %d, want 2, 10, 8", idx.Dead(), idx.Slots(), idx.Live())
	}
	t.Run("after writes", check)

	idx.Pack()
	t.Run("packed", check)
}

func scoredIDs(res []store.Scored) []string {
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

// corpus generates random drawers whose words follow a Zipf law, some of
// them copies of others (so that scores tie).
type corpus struct {
	r      *rand.Rand
	vocab  []string
	zipf   *rand.Zipf
	rowid  int64
	wings  []string
	rooms  []string
	agents []string
	docs   []doc
}

func newCorpus(seed uint64, words int) *corpus {
	r := rand.New(rand.NewPCG(seed, 0x1e71dec5))
	c := &corpus{
		r:      r,
		wings:  []string{"work", "home", "archive", "travel"},
		rooms:  []string{"notes", "ops", "garden", "kitchen", "journal", "inbox"},
		agents: []string{"alice", "bob", "carol"},
	}
	// Made-up words, some of them sharing a stem (s, ing, ed suffixes).
	const cons, vows = "bcdfglmnprstvz", "aeiou"
	suffixes := []string{"", "", "", "s", "ing", "ed"}
	seen := make(map[string]bool)
	for len(c.vocab) < words {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteByte(cons[r.IntN(len(cons))])
			b.WriteByte(vows[r.IntN(len(vows))])
		}
		b.WriteString(suffixes[r.IntN(len(suffixes))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	c.zipf = rand.NewZipf(r, 1.1, 2, uint64(words-1))
	return c
}

func (c *corpus) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func (c *corpus) date() string {
	if c.r.IntN(5) == 0 {
		return ""
	}
	return time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, c.r.IntN(730)).Format(time.DateOnly)
}

// doc returns a new drawer id (or a new version of it), with a rowid
// above every one before, as SQLite gives a row written again.
func (c *corpus) doc(id string) doc {
	c.rowid += 1 + int64(c.r.IntN(3))
	d := doc{
		rowid: c.rowid, id: id,
		wing: c.wings[c.r.IntN(len(c.wings))], room: c.rooms[c.r.IntN(len(c.rooms))],
		agent: c.agents[c.r.IntN(len(c.agents))], date: c.date(),
		heading: c.words(c.r.IntN(4)), text: c.words(3 + c.r.IntN(40)),
	}
	if len(c.docs) > 0 && c.r.IntN(15) == 0 {
		src := c.docs[c.r.IntN(len(c.docs))]
		d.heading, d.text, d.wing, d.room, d.agent = src.heading, src.text, src.wing, src.room, src.agent
	}
	c.docs = append(c.docs, d)
	return d
}

// filters are a mix of every kind of bound over c's values, with dates
// taken from its drawers so that bounds fall on them.
func (c *corpus) filters() []store.Filter {
	date := func() string {
		for {
			if d := c.docs[c.r.IntN(len(c.docs))].date; d != "" {
				return d
			}
		}
	}
	pick := func(vals []string) string { return vals[c.r.IntN(len(vals))] }
	since := date()
	until := date()
	if until < since {
		since, until = until, since
	}
	return []store.Filter{
		{},
		{Wing: pick(c.wings)},
		{Room: pick(c.rooms)},
		{Agent: pick(c.agents)},
		{Wing: pick(c.wings), Room: pick(c.rooms)},
		{Since: date()},
		{Until: date()},
		{Since: since, Until: until},
		{Wing: pick(c.wings), Agent: pick(c.agents), Since: since},
		{Wing: "unknown"},
	}
}

// query is a few Zipf words (so repeats happen), now and then with a word
// no drawer holds.
func (c *corpus) query() []string {
	q := fts.Tokens(c.words(1 + c.r.IntN(5)))
	if c.r.IntN(4) == 0 {
		q = append(q, "qqqxj")
	}
	return q
}

func TestSearchRandomCorpus(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			c := newCorpus(seed, 300)
			idx, m := lexindex.New(7, scopeTokens), newModel()
			const n = 600
			for i := range n {
				m.add(idx, c.doc(fmt.Sprint("d", i)))
			}
			vocab := fts.Tokens(strings.Join(c.vocab, " "))
			check := func(t *testing.T) {
				checkStats(t, idx, m, vocab)
				for range 20 {
					q := c.query()
					for _, f := range c.filters() {
						checkSearch(t, idx, m, q, f, 1, 5, 20, 2*n)
					}
				}
			}
			t.Run("built", func(t *testing.T) {
				idx.Pack()
				check(t)
			})
			// Deletes, replacements, and deleted drawers written again.
			var removed []string
			for range 150 {
				id := fmt.Sprint("d", c.r.IntN(n))
				if _, ok := m.docs[id]; ok {
					removed = append(removed, id)
				}
				m.remove(idx, id)
			}
			for range 100 {
				m.add(idx, c.doc(fmt.Sprint("d", c.r.IntN(n))))
			}
			for _, id := range removed[:len(removed)/3] {
				m.add(idx, c.doc(id))
			}
			if idx.Dead() == 0 {
				t.Fatal("no dead slots after deletes and replacements")
			}
			t.Run("after writes", check)
			idx.Compact() // whether it compacts or not, nothing changes
			t.Run("after Compact", check)
		})
	}
}

func TestSearchEmpty(t *testing.T) {
	empty := lexindex.New(0, nil)
	if got := empty.Search([]string{"anything"}, store.Filter{}, 10); len(got) != 0 {
		t.Errorf("empty index: Search = %v, want nothing", got)
	}
	if empty.Live() != 0 || empty.Total() != 0 || empty.Slots() != 0 || empty.Dead() != 0 || empty.DF("anything") != 0 {
		t.Errorf("empty index: Live, Total, Slots, Dead, DF = %d, %d, %d, %d, %d, want zeros",
			empty.Live(), empty.Total(), empty.Slots(), empty.Dead(), empty.DF("anything"))
	}
	empty.Pack()
	empty.Compact()
	if got := empty.Search([]string{"anything"}, store.Filter{}, 10); len(got) != 0 {
		t.Errorf("empty index after Pack and Compact: Search = %v, want nothing", got)
	}

	idx := lexindex.New(0, nil)
	for _, d := range handDocs() {
		idx.Add(d.row())
	}
	for _, tc := range []struct {
		name  string
		query []string
		k     int
	}{
		{"nil query", nil, 10},
		{"empty query", []string{}, 10},
		{"empty token", []string{""}, 10},
		{"unknown tokens", []string{"zebra", "qqqxj"}, 10},
		{"a scope token is not scored", scopeTokens("work", "notes", "alice")[:1], 10},
		{"k = 0", fts.Tokens("database"), 0},
		{"k < 0", fts.Tokens("database"), -1},
	} {
		if got := idx.Search(tc.query, store.Filter{}, tc.k); len(got) != 0 {
			t.Errorf("%s: Search(%q, k=%d) = %v, want nothing", tc.name, tc.query, tc.k, got)
		}
	}

	// Every drawer deleted: nothing to rank, and no division by zero.
	for _, d := range handDocs() {
		idx.Remove(d.id)
	}
	if got := idx.Search(fts.Tokens("database"), store.Filter{}, 10); len(got) != 0 {
		t.Errorf("all removed: Search = %v, want nothing", got)
	}
	if tok := fts.Tokens("database")[0]; idx.Live() != 0 || idx.Total() != 0 || idx.DF(tok) != 0 {
		t.Errorf("all removed: Live, Total, DF = %d, %d, %d, want zeros", idx.Live(), idx.Total(), idx.DF(tok))
	}
}

// TestSearchHugeK asks for more results than can ever exist (k comes from
// configuration): the answer is every match, as SQL's LIMIT gives, with no
// buffer sized by k (math.MaxInt would overflow k+1; math.MaxInt32 would
// ask for tens of GiB).
func TestSearchHugeK(t *testing.T) {
	idx, m := lexindex.New(0, scopeTokens), newModel()
	for _, d := range handDocs() {
		m.add(idx, d)
	}
	checkSearch(t, idx, m, fts.Tokens("deploy database"), store.Filter{}, math.MaxInt, math.MaxInt32, 1, 100)
}

func TestReplaceAndRemove(t *testing.T) {
	idx, m := lexindex.New(0, scopeTokens), newModel()
	vocab := fts.Tokens("apple banana cherry damson elder")
	step := func(name string, dead, slots int) {
		t.Helper()
		if idx.Dead() != dead || idx.Slots() != slots {
			t.Errorf("%s: Dead, Slots = %d, %d, want %d, %d", name, idx.Dead(), idx.Slots(), dead, slots)
		}
		checkStats(t, idx, m, vocab)
		for _, q := range []string{"apple", "banana", "cherry", "damson", "elder", "apple cherry elder"} {
			for _, f := range []store.Filter{{}, {Wing: "w1"}, {Wing: "w2"}, {Room: "r1"}} {
				checkSearch(t, idx, m, fts.Tokens(q), f, 1, 10)
			}
		}
	}
	// Enough other drawers that no term is in half of them (IDF clamp).
	for i := range 6 {
		m.add(idx, doc{int64(100 + i), fmt.Sprint("other", i), "w9", "r9", "z", "", "", "filler words here"})
	}
	m.add(idx, doc{1, "x", "w1", "r1", "ag", "", "apple", "banana banana"})
	step("added", 0, 7)
	if got := idx.Search(fts.Tokens("apple"), store.Filter{}, 10); len(got) != 1 || got[0].ID != "x" {
		t.Errorf("Search(apple) = %v, want x", got)
	}

	// The same id again replaces it: the old row's terms, size and scope
	// are gone.
	m.add(idx, doc{2, "x", "w2", "r1", "ag", "", "cherry", "damson damson damson elder"})
	step("replaced", 1, 8)
	if got := idx.Search(fts.Tokens("apple banana"), store.Filter{}, 10); len(got) != 0 {
		t.Errorf("replaced: Search(apple banana) = %v, want nothing", got)
	}
	if idx.HasScope("w:w1") || !idx.HasScope("w:w2") {
		t.Errorf("replaced: HasScope(w:w1), HasScope(w:w2) = %v, %v, want false, true", idx.HasScope("w:w1"), idx.HasScope("w:w2"))
	}
	if got := idx.Search(fts.Tokens("cherry"), store.Filter{Wing: "w1"}, 10); len(got) != 0 {
		t.Errorf("replaced: Search(cherry, wing w1) = %v, want nothing", got)
	}

	m.add(idx, doc{3, "y", "w1", "r1", "ag", "", "", "apple elder"})
	step("second drawer", 1, 9)

	m.remove(idx, "x")
	step("removed", 2, 9)
	m.remove(idx, "x") // already gone
	m.remove(idx, "never")
	step("removed again", 2, 9)

	m.add(idx, doc{4, "x", "w1", "r1", "ag", "", "banana", "apple"})
	step("re-added", 2, 10)
}

func TestHasScope(t *testing.T) {
	idx := lexindex.New(0, scopeTokens)
	idx.Add(doc{1, "a", "w", "r1", "ag", "", "", "one"}.row())
	idx.Add(doc{2, "b", "w", "r2", "ag", "", "", "two"}.row())
	for _, tc := range []struct {
		tok  string
		want bool
	}{{"w:w", true}, {"r:r1", true}, {"r:r2", true}, {"a:ag", true}, {"w:r1", false}, {"one", false}} {
		if got := idx.HasScope(tc.tok); got != tc.want {
			t.Errorf("HasScope(%q) = %v, want %v", tc.tok, got, tc.want)
		}
	}
	idx.Remove("a")
	if !idx.HasScope("w:w") || idx.HasScope("r:r1") || !idx.HasScope("r:r2") {
		t.Errorf("after removing a: HasScope(w:w), (r:r1), (r:r2) = %v, %v, %v, want true, false, true",
			idx.HasScope("w:w"), idx.HasScope("r:r1"), idx.HasScope("r:r2"))
	}
	idx.Remove("b")
	if idx.HasScope("w:w") || idx.HasScope("a:ag") {
		t.Error("after removing every drawer: HasScope still true")
	}

	noScope := lexindex.New(0, nil)
	noScope.Add(doc{1, "a", "w", "r1", "ag", "", "", "one"}.row())
	if noScope.HasScope("w:w") {
		t.Error("without scopeTokens: HasScope(w:w) = true")
	}
}

// TestCompact deletes most of a large index, compacts it, and checks every
// answer is what it was, exactly, and that the index keeps working.
func TestCompact(t *testing.T) {
	c := newCorpus(42, 200)
	idx, m := lexindex.New(0, scopeTokens), newModel()
	const n = 2600
	for i := range n {
		d := c.doc(fmt.Sprint("d", i))
		d.text = c.words(2 + c.r.IntN(8))
		m.add(idx, d)
	}
	idx.Pack()
	for i := 0; i < n; i += 2 {
		m.remove(idx, fmt.Sprint("d", i))
	}
	for i := 1; i < 400; i += 4 { // replaced: a dead slot each too
		d := c.doc(fmt.Sprint("d", i))
		d.text = c.words(2 + c.r.IntN(8))
		m.add(idx, d)
	}
	vocab := fts.Tokens(strings.Join(c.vocab, " "))
	type search struct {
		q []string
		f store.Filter
	}
	var searches []search
	var before [][]store.Scored
	for range 20 {
		q := c.query()
		for _, f := range c.filters() {
			searches = append(searches, search{q, f})
			before = append(before, idx.Search(q, f, 50))
		}
	}
	dfBefore := make([]int, len(vocab))
	for i, tok := range vocab {
		dfBefore[i] = idx.DF(tok)
	}
	live, total, dead := idx.Live(), idx.Total(), idx.Dead()
	if dead < 1024 || dead < live {
		t.Fatalf("set-up: %d dead slots of %d live, want them many", dead, live)
	}

	idx.Compact()

	if idx.Dead() != 0 || idx.Slots() != live || idx.Live() != live || idx.Total() != total {
		t.Errorf("compacted: Dead, Slots, Live, Total = %d, %d, %d, %d, want 0, %d, %d, %d",
			idx.Dead(), idx.Slots(), idx.Live(), idx.Total(), live, live, total)
	}
	for i, tok := range vocab {
		if got := idx.DF(tok); got != dfBefore[i] {
			t.Errorf("compacted: DF(%q) = %d, want %d", tok, got, dfBefore[i])
		}
	}
	for i, s := range searches {
		if got := idx.Search(s.q, s.f, 50); !slices.Equal(got, before[i]) {
			t.Errorf("compacted: Search(%q, %+v):\n got %v\nwant %v", s.q, s.f, got, before[i])
		}
	}
	checkStats(t, idx, m, vocab)

	// Ids map to their new slots: removing and replacing drawers after the
	// compaction hits the right rows.
	for i := 1; i < n; i += 6 {
		m.remove(idx, fmt.Sprint("d", i))
	}
	for i := 3; i < n; i += 10 {
		m.add(idx, c.doc(fmt.Sprint("d", i)))
	}
	checkStats(t, idx, m, vocab)
	for range 10 {
		q := c.query()
		for _, f := range c.filters() {
			checkSearch(t, idx, m, q, f, 1, 10, n)
		}
	}
}

// TestPack checks a packed index answers as before and that posting lists
// grown after Pack do not write over one another.
func TestPack(t *testing.T) {
	c := newCorpus(9, 150)
	idx, m := lexindex.New(0, scopeTokens), newModel()
	for i := range 300 {
		m.add(idx, c.doc(fmt.Sprint("d", i)))
	}
	vocab := fts.Tokens(strings.Join(c.vocab, " "))
	idx.Pack()
	idx.Pack() // twice is harmless
	checkStats(t, idx, m, vocab)
	// Every posting list grows by one, then more.
	all := doc{id: "all", wing: "work", room: "notes", agent: "bob", text: strings.Join(c.vocab, " ")}
	for i := range 5 {
		c.rowid++
		all.rowid, all.id = c.rowid, fmt.Sprint("all", i)
		m.add(idx, all)
	}
	for i := range 50 {
		m.add(idx, c.doc(fmt.Sprint("new", i)))
	}
	checkStats(t, idx, m, vocab)
	for range 20 {
		q := c.query()
		for _, f := range c.filters() {
			checkSearch(t, idx, m, q, f, 3, 1000)
		}
	}
}

// TestConcurrentSearch runs searches side by side, as callers do under a
// read lock: each must get what it gets alone.
func TestConcurrentSearch(t *testing.T) {
	c := newCorpus(5, 200)
	idx := lexindex.New(0, nil)
	for i := range 400 {
		idx.Add(c.doc(fmt.Sprint("d", i)).row())
	}
	idx.Remove("d3")
	type search struct {
		q    []string
		f    store.Filter
		want []store.Scored
	}
	var searches []search
	for range 30 {
		q := c.query()
		for _, f := range c.filters()[:4] {
			searches = append(searches, search{q, f, idx.Search(q, f, 10)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(searches))
	for g := range 8 {
		wg.Go(func() {
			for i := range searches {
				s := searches[(i+g*7)%len(searches)]
				if got := idx.Search(s.q, s.f, 10); !slices.Equal(got, s.want) {
					errs <- fmt.Sprintf("Search(%q, %+v) = %v, want %v", s.q, s.f, got, s.want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestDateCode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"2024-01-05", 20240105},
		{"1999-12-31", 19991231},
		{"0001-01-01", 10101},
		{"9999-12-31", 99991231},
		{"", 0},
		{"2024-01-5", 0},
		{"2024-1-5", 0},
		{"2024-01-05T10:00:00Z", 0},
		{"2024-01-050", 0},
		{"20240105", 0},
		{"yesterday", 0},
		{"abcdefghij", 0},
		{"----------", 0},
	} {
		if got := lexindex.DateCode(tc.in); got != tc.want {
			t.Errorf("DateCode(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}

	// Codes sort as the dates do.
	dates := []string{"2023-12-31", "2024-01-01", "2024-01-10", "2024-02-01", "2024-10-01", "2025-01-01"}
	for i := 1; i < len(dates); i++ {
		if a, b := lexindex.DateCode(dates[i-1]), lexindex.DateCode(dates[i]); a >= b {
			t.Errorf("DateCode(%q) = %d >= DateCode(%q) = %d", dates[i-1], a, dates[i], b)
		}
	}
}

// TestDateCodeMalformedSameLength holds DateCode to its comment ("0 for
// anything else") on strings of a date's length that are not one.
func TestDateCodeMalformedSameLength(t *testing.T) {
	for _, in := range []string{"2024/01/05", "2024-01-0x", "x024-01-05", "20240105  ", "abcd-01-05"} {
		if got := lexindex.DateCode(in); got != 0 {
			t.Errorf("DateCode(%q) = %d, want 0 (not a YYYY-MM-DD date)", in, got)
		}
	}
}

func TestScopeOf(t *testing.T) {
	codes := map[string]int32{"work": 0, "notes": 1, "alice": 2, "home": 3}
	d := lexindex.DateCode
	type row struct {
		wing, room, agent int32
		date              string
	}
	rows := []row{
		{0, 1, 2, "2024-01-05"},
		{0, 1, 2, ""},
		{3, 1, 2, "2024-01-04"},
		{0, 3, 2, "2024-01-06"},
		{0, 1, 3, "2024-02-01"},
	}
	for _, tc := range []struct {
		f     store.Filter
		ok    bool
		all   bool
		admit []bool // rows
	}{
		{store.Filter{}, true, true, []bool{true, true, true, true, true}},
		{store.Filter{Wing: "work"}, true, false, []bool{true, true, false, true, true}},
		{store.Filter{Room: "notes"}, true, false, []bool{true, true, true, false, true}},
		{store.Filter{Agent: "alice"}, true, false, []bool{true, true, true, true, false}},
		{store.Filter{Wing: "work", Room: "notes", Agent: "alice"}, true, false, []bool{true, true, false, false, false}},
		{store.Filter{Since: "2024-01-05"}, true, false, []bool{true, false, false, true, true}},
		{store.Filter{Until: "2024-01-05"}, true, false, []bool{true, false, true, false, false}},
		{store.Filter{Since: "2024-01-05", Until: "2024-01-06"}, true, false, []bool{true, false, false, true, false}},
		{store.Filter{Since: "2024-01-05", Until: "2024-01-05"}, true, false, []bool{true, false, false, false, false}},
		{store.Filter{Since: "2024-01-06", Until: "2024-01-05"}, true, false, []bool{false, false, false, false, false}},
		{store.Filter{Wing: "nowhere"}, false, false, nil},
		{store.Filter{Room: "nowhere"}, false, false, nil},
		{store.Filter{Agent: "nobody"}, false, false, nil},
		{store.Filter{Wing: "work", Agent: "nobody"}, false, false, nil},
	} {
		sc, ok := lexindex.ScopeOf(codes, tc.f)
		if ok != tc.ok {
			t.Errorf("ScopeOf(%+v): ok = %v, want %v", tc.f, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if sc.All() != tc.all {
			t.Errorf("ScopeOf(%+v).All() = %v, want %v", tc.f, sc.All(), tc.all)
		}
		for i, r := range rows {
			if got := sc.Admits(r.wing, r.room, r.agent, d(r.date)); got != tc.admit[i] {
				t.Errorf("ScopeOf(%+v).Admits(%+v) = %v, want %v", tc.f, r, got, tc.admit[i])
			}
		}
	}
}

// TestPrune holds the query plan both backends rank by: terms no drawer
// holds are dropped, and terms in half the drawers or more are dropped
// when rarer ones (or terms of unknown frequency) remain, kept otherwise.
func TestPrune(t *testing.T) {
	df := map[string]int{"none": 0, "rare": 1, "rarer": 2, "half": 5, "most": 9, "phrase": -1}
	for _, c := range []struct {
		terms, want []string
	}{
		{nil, nil},
		{[]string{"none"}, nil},
		{[]string{"rare", "half", "none", "rarer"}, []string{"rare", "rarer"}},
		{[]string{"half", "most"}, []string{"half", "most"}},
		{[]string{"most", "none", "half"}, []string{"most", "half"}},
		{[]string{"most", "phrase"}, []string{"phrase"}},
	} {
		if got := lexindex.Prune(c.terms, 10, func(t string) int { return df[t] }); !slices.Equal(got, c.want) {
			t.Errorf("Prune(%q) = %q, want %q", c.terms, got, c.want)
		}
	}
}
