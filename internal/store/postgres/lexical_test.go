package postgres_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// TestLexicalMatchesSQLite holds PostgreSQL's lexical ranking to the SQLite
// backend's on the same random palace: a Zipf vocabulary, so that queries
// mix words most drawers hold with rare ones and the rare-term tier
// (answering from the drawers that hold a rare word alone, when provably
// exact) is taken on some queries and refused on others. For every query,
// filter and k, the scores agree position by position (to float rounding)
// and so do the ids, but for drawers tied to the last bits.
func TestLexicalMatchesSQLite(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 29))
	words, word := zipfWords(rng, 400)
	sq := openSQLite(t)
	pg := openPG(t, postgres.Options{DSN: pgtest.Schema(t, pgtest.EnvPostgres)})
	id := 0
	for f := range 40 {
		src := fmt.Sprintf("hive/agents/a%d/memory.md", f%5)
		src = strings.Replace(src, "memory.md", fmt.Sprintf("m%d.md", f), 1)
		wing := fmt.Sprintf("a%d", f%5)
		u := store.FileUpdate{File: store.File{Source: src, Hash: src, Size: 1, MinedAt: time.Now(), Wing: wing, Agent: wing}}
		for j := range 50 {
			d := zipfDrawer(rng, word, id, src, j+1)
			d.Wing, d.Room, d.Agent = wing, "recent", wing
			u.Insert = append(u.Insert, d)
			id++
		}
		for _, s := range []store.Store{sq, pg} {
			if err := s.Apply(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	filters := []store.Filter{{}, {Wing: "a2"}}
	for qi := range 150 {
		var q []string
		for range 2 + rng.IntN(3) {
			if rng.IntN(3) == 0 {
				q = append(q, words[rng.IntN(len(words))]) // often a rare word
			} else {
				q = append(q, word())
			}
		}
		query := strings.Join(q, " ")
		for _, f := range filters {
			for _, k := range []int{1, 5, 30} {
				want := lexical(t, sq, query, f, k)
				got := lexical(t, pg, query, f, k)
				sameRanking(t, fmt.Sprintf("query %d %q %+v k=%d (want: SQLite's)", qi, query, f, k), got, want)
			}
		}
	}
}

// lexical is s.Lexical, failing the test on an error.
func lexical(t *testing.T, s store.Store, q string, f store.Filter, k int) []store.Scored {
	t.Helper()
	res, err := s.Lexical(t.Context(), q, f, k)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// openPG opens a PostgreSQL store with opts, closed when the test ends.
func openPG(t testing.TB, opts postgres.Options) *postgres.Store {
	t.Helper()
	return storetest.MustOpen(t, func() (*postgres.Store, error) { return postgres.Open(t.Context(), opts) })
}

// openSQLite opens a new SQLite palace, closed when the test ends.
func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "palace.db")
	return storetest.MustOpen(t, func() (*sqlite.Store, error) { return sqlite.Open(t.Context(), path) })
}

// zipfWords makes n words and a draw from them with a Zipf law, so that a
// random palace mixes words most drawers hold with rare ones.
func zipfWords(rng *rand.Rand, n int) (words []string, word func() string) {
	words = make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx", i)
	}
	z := rand.NewZipf(rng, 1.2, 3, uint64(n-1))
	return words, func() string { return words[z.Uint64()] }
}

// zipfDrawer is drawer number id of src, at line: a heading of 1-3 and a
// text of 5-44 words drawn by word (the caller sets wing, room, agent and
// date).
func zipfDrawer(rng *rand.Rand, word func() string, id int, src string, line int) store.Drawer {
	return store.Drawer{
		ID: fmt.Sprintf("d%05d", id), Source: src, LineStart: line, LineEnd: line, Hash: fmt.Sprint(id),
		Heading: storetest.Words(rng, word, 1, 3), Text: storetest.Words(rng, word, 5, 40),
	}
}

// sameRanking fails unless got matches want position by position: scores
// to float rounding, ids but for drawers tied to the last bits.
func sameRanking(t *testing.T, what string, got, want []store.Scored) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if math.Abs(g.Score-w.Score) > 1e-9*math.Abs(w.Score) {
			t.Fatalf("%s: result %d scores %v, want %v", what, i, g.Score, w.Score)
		}
		tied := (i > 0 && math.Abs(w.Score-want[i-1].Score) <= 1e-9*math.Abs(w.Score)) ||
			(i+1 < len(want) && math.Abs(w.Score-want[i+1].Score) <= 1e-9*math.Abs(w.Score))
		if g.ID != w.ID && !tied {
			t.Fatalf("%s: result %d is %s, want %s", what, i, g.ID, w.ID)
		}
		if g.Rank != i+1 {
			t.Fatalf("%s: result %d has rank %d", what, i, g.Rank)
		}
	}
}

// TestLexicalWarm holds the warm lexical index of one PostgreSQL handle to
// the SQL path of another (the writer) and to the SQLite backend, on a
// random Zipf palace, over filters and k, first as built and then after
// each kind of write the writer makes: the index must follow them by
// deltas (or, after Reset, a rebuild) and answer every query itself.
func TestLexicalWarm(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(11, 5))
	words, word := zipfWords(rng, 300)
	sq := openSQLite(t)
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	open := func() *postgres.Store { return openPG(t, postgres.Options{DSN: dsn}) }
	w, warm := open(), open() // w writes and answers in SQL
	warm.WarmLexical()
	all := []store.Store{sq, w}
	apply := func(u store.FileUpdate) {
		t.Helper()
		for _, s := range all {
			if err := s.Apply(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	drawers := map[string][]store.Drawer{} // source -> its drawers, as written
	id := 0
	newDrawer := func(src, wing string, line int) store.Drawer {
		id++
		d := zipfDrawer(rng, word, id, src, line)
		if rng.IntN(5) > 0 {
			d.Date = fmt.Sprintf("2026-%02d-%02d", 1+rng.IntN(3), 1+rng.IntN(28))
		}
		d.Wing, d.Room, d.Agent = wing, fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("a%d", rng.IntN(2))
		return d
	}
	file := func(src, wing string) store.File {
		return store.File{Source: src, Hash: src, Size: 1, MinedAt: time.Now(), Wing: wing, Agent: wing}
	}
	mine := func(f, n int) {
		src := fmt.Sprintf("hive/m%d.md", f)
		wing := fmt.Sprintf("g%d", f%4)
		u := store.FileUpdate{File: file(src, wing)}
		for j := range n {
			u.Insert = append(u.Insert, newDrawer(src, wing, len(drawers[src])+j+1))
		}
		apply(u)
		drawers[src] = append(drawers[src], u.Insert...)
	}
	for f := range 30 {
		mine(f, 40)
	}
	filters := []store.Filter{
		{}, {Wing: "g2"}, {Room: "r1"}, {Agent: "a0"}, {Wing: "g1", Room: "r2", Agent: "a1"},
		{Since: "2026-02-01"}, {Until: "2026-01-15"}, {Wing: "g3", Since: "2026-01-10", Until: "2026-02-20"},
		{Wing: "nowhere"},
	}
	// check runs queries on all three and compares; warmOK says whether
	// the warm index must have answered every one.
	check := func(phase string, warmOK bool) {
		t.Helper()
		before, _, _ := warm.LexWarmStats()
		asked := 0
		for qi := range 25 {
			var q []string
			for range 1 + rng.IntN(4) {
				if rng.IntN(3) == 0 {
					q = append(q, words[rng.IntN(len(words))])
				} else {
					q = append(q, word())
				}
			}
			if qi%7 == 0 {
				q = append(q, q[0]) // a repeated word counts twice
			}
			query := strings.Join(q, " ")
			for _, f := range filters {
				for _, k := range []int{1, 5, 30, 500} {
					what := fmt.Sprintf("%s: query %q %+v k=%d", phase, query, f, k)
					want := lexical(t, w, query, f, k)
					got := lexical(t, warm, query, f, k)
					asked++
					sameRanking(t, what+" (warm vs SQL)", got, want)
					lite := lexical(t, sq, query, f, k)
					sameRanking(t, what+" (warm vs SQLite)", got, lite)
				}
			}
		}
		if after, _, _ := warm.LexWarmStats(); warmOK && after-before != int64(asked) {
			t.Fatalf("%s: the warm index answered %d of %d queries", phase, after-before, asked)
		}
	}
	// Before the build the SQL path answers; the first search starts it.
	check("cold", false)
	warm.WaitLexWarm()
	if _, builds, _ := warm.LexWarmStats(); builds != 1 {
		t.Fatalf("%d builds, want 1", builds)
	}
	check("built", true)

	writes := []struct {
		name  string
		write func()
	}{
		{"insert", func() {
			mine(100, 30) // a new file
			mine(3, 10)   // more drawers in an old one
		}},
		{"update", func() {
			// Metadata moves (wing, room, agent, date) and new headings
			// (re-indexed) for a third of one file's drawers.
			src := "hive/m5.md"
			u := store.FileUpdate{File: file(src, "g1")}
			for i := range drawers[src] {
				d := &drawers[src][i]
				if i%3 != 0 {
					continue
				}
				d.Wing, d.Room, d.Agent, d.Date = "g0", "r9", "a1", "2026-03-03"
				if i%2 == 0 {
					d.Heading = word() + " " + word()
				}
				u.Update = append(u.Update, *d)
			}
			apply(u)
		}},
		{"delete", func() {
			src := "hive/m7.md"
			u := store.FileUpdate{File: file(src, "g3")}
			keep := drawers[src][:0]
			for i, d := range drawers[src] {
				if i%2 == 0 {
					u.Delete = append(u.Delete, d.ID)
				} else {
					keep = append(keep, d)
				}
			}
			drawers[src] = keep
			apply(u)
		}},
		{"delete and insert", func() {
			// One write deleting drawers and inserting new ones (a re-mine).
			src := "hive/m8.md"
			u := store.FileUpdate{File: file(src, "g0")}
			for _, d := range drawers[src][:20] {
				u.Delete = append(u.Delete, d.ID)
			}
			for j := range 15 {
				u.Insert = append(u.Insert, newDrawer(src, "g0", 100+j))
			}
			drawers[src] = append(drawers[src][20:], u.Insert...)
			apply(u)
		}},
		{"delete file", func() {
			for _, src := range []string{"hive/m9.md", "hive/m10.md"} {
				for _, s := range all {
					if err := s.DeleteFile(ctx, src); err != nil {
						t.Fatal(err)
					}
				}
				delete(drawers, src)
			}
		}},
	}
	for _, wr := range writes {
		_, _, deltas := warm.LexWarmStats()
		wr.write()
		check(wr.name, true)
		if _, builds, d := warm.LexWarmStats(); builds != 1 || d <= deltas {
			t.Fatalf("after %s: %d builds (want 1), deltas %d -> %d", wr.name, builds, deltas, d)
		}
	}

	// Reset: the index is older than reset_gen and is rebuilt; until then
	// SQL answers.
	for _, s := range all {
		if err := s.Reset(ctx); err != nil {
			t.Fatal(err)
		}
	}
	drawers = map[string][]store.Drawer{}
	check("reset", false)
	warm.WaitLexWarm()
	check("reset, rebuilt", true)
	for f := range 10 {
		mine(200+f, 20)
	}
	check("after reset", true)
	if _, builds, _ := warm.LexWarmStats(); builds != 2 {
		t.Fatalf("%d builds, want 2", builds)
	}
}

// TestLexicalWarmConcurrent searches a warm index from several goroutines
// while another handle writes (for the race detector), then checks that
// the index caught up with the writes.
func TestLexicalWarmConcurrent(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	w := openPG(t, postgres.Options{DSN: dsn})
	warm := openPG(t, postgres.Options{DSN: dsn})
	warm.WarmLexical()
	write := func(i int) {
		src := fmt.Sprintf("c%d.md", i%5)
		u := store.FileUpdate{File: store.File{Source: src, Hash: "h", Wing: "w", Agent: "a"}}
		old, err := w.Drawers(ctx, src)
		if err != nil {
			t.Error(err)
			return
		}
		for _, d := range old {
			u.Delete = append(u.Delete, d.ID)
		}
		for j := range 10 {
			u.Insert = append(u.Insert, store.Drawer{ID: fmt.Sprintf("%s#%d-%d", src, i, j), Wing: "w", Room: "r", Agent: "a", Source: src,
				Heading: "alpha", LineStart: j + 1, LineEnd: j + 1, Hash: "h", Text: fmt.Sprintf("beta gamma%d delta%d", i, j)})
		}
		if err := w.Apply(ctx, u); err != nil {
			t.Error(err)
		}
	}
	write(0)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := warm.Lexical(ctx, "alpha beta gamma3 delta4", store.Filter{}, 5); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i < 30; i++ {
		write(i)
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	warm.WaitLexWarm()
	before, _, _ := warm.LexWarmStats()
	for _, q := range []string{"alpha", "gamma29 delta3", "beta delta1"} {
		want := lexical(t, w, q, store.Filter{}, 20)
		got := lexical(t, warm, q, store.Filter{}, 20)
		sameRanking(t, q, got, want)
	}
	if after, _, _ := warm.LexWarmStats(); after-before != 3 {
		t.Fatalf("the warm index answered %d of 3 queries", after-before)
	}
}

// rareWordsPalace applies storetest.RareWordsPalace(files, per, rare) to s.
func rareWordsPalace(t testing.TB, s store.Store, files, per, rare int) {
	t.Helper()
	for _, u := range storetest.RareWordsPalace(files, per, rare) {
		if err := s.Apply(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLexicalEqualsPlainQuery holds Lexical to one full query over the
// terms it searches (no rare-terms tier), over a palace shaped like the
// Search100k benchmark's (storetest.RareWordsPalace), for queries of rare
// words only, rare words with a middling or common one, and words no
// drawer holds, over scopes of every drawer, most, half, a tenth and few,
// and date bounds: the same ranking (scores to float rounding, ids but for ties).
// Some searches must take the tier and some must not.
func TestLexicalEqualsPlainQuery(t *testing.T) {
	ctx := t.Context()
	pg := openPG(t, postgres.Options{DSN: pgtest.Schema(t, pgtest.EnvPostgres)})
	rareWordsPalace(t, pg, 8, 500, 60)
	queries, filters := storetest.RareWordsQueries, storetest.RareWordsFilters
	tiered, searches := 0, 0
	for _, q := range queries {
		for _, f := range filters {
			for _, k := range []int{1, 5, 10, 50} {
				want, tier, err := pg.LexicalPlain(ctx, q, f, k)
				if err != nil {
					t.Fatal(err)
				}
				if tier {
					tiered++
				}
				searches++
				sameRanking(t, fmt.Sprintf("Lexical(%q, %+v, %d) (want: the plain query)", q, f, k), lexical(t, pg, q, f, k), want)
			}
		}
	}
	t.Logf("%d searches, %d answered by the rare-terms tier", searches, tiered)
	if tiered == 0 || tiered == searches {
		t.Errorf("%d of %d searches took the rare-terms tier: the table must exercise both paths", tiered, searches)
	}
}
