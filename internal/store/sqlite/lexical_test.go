package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/lexindex"
	"github.com/hivemem/hivemem/internal/store/sqlq"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// TestLexicalMatchesPlainQuery holds Lexical's shortcuts (dropping clamped
// terms, scope tokens, the rare-terms tier) to what one plain FTS5 query
// over every term, filtered in SQL, returns: the same scores rank by rank
// (within 1e-5, the size of a clamped term's part) and the same ids wherever
// the scores are not tied.
func TestLexicalMatchesPlainQuery(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	n := 3000
	if testing.Short() {
		n = 1200
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := storetest.Vocabulary(rng, benchVocab)[:4000]
	word := storetest.Zipf(rng, words)
	wings := []string{"ada", "bob", "cy"}
	for b := 0; b < n/300; b++ {
		src := fmt.Sprintf("f%d.md", b)
		u := store.FileUpdate{File: store.File{Source: src}}
		for i := range 300 {
			ws := make([]string, 10+rng.IntN(60))
			for j := range ws {
				ws[j] = word()
			}
			u.Insert = append(u.Insert, store.Drawer{
				ID: fmt.Sprintf("%s#%d", src, i), Source: src, Wing: wings[(b+i)%3], Room: []string{"recent", "archive"}[i%2],
				Agent: wings[b%3], Date: fmt.Sprintf("2026-01-%02d", 1+i%28), Heading: strings.Join(ws[:3], " "), Text: strings.Join(ws[3:], " "),
			})
		}
		if err := s.Apply(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	filters := []store.Filter{{}, {Wing: "bob"}, {Room: "archive", Agent: "cy"}, {Since: "2026-01-10", Until: "2026-01-20"}, {Wing: "ada", Since: "2026-01-15"}}
	qrng := rand.New(rand.NewPCG(3, 4))
	tiers, checked := 0, 0
	for qi := range 150 {
		nw := 2 + qrng.IntN(5)
		ws := make([]string, nw)
		for j := range ws {
			// A mix of very common, common and rare words.
			switch qrng.IntN(3) {
			case 0:
				ws[j] = words[qrng.IntN(15)]
			case 1:
				ws[j] = words[15+qrng.IntN(100)]
			default:
				ws[j] = words[100+qrng.IntN(3900)]
			}
		}
		q := strings.Join(ws, " ")
		f := filters[qi%len(filters)]
		k := []int{1, 5, 10, 30}[qi%4]

		got, err := s.Lexical(ctx, q, f, k)
		if err != nil {
			t.Fatalf("Lexical(%q): %v", q, err)
		}
		// One more than asked, to see ties at rank k.
		want, err := s.topK(ctx, s.rdb, bm25SQL, []any{matchExpr(store.QueryTerms(q), store.Filter{})}, scope{f: f, share: 1}, k+1)
		if err != nil {
			t.Fatal(err)
		}
		next := want[min(k, len(want)):]
		want = want[:min(k, len(want))]
		if infos, nd, err := s.termStats(ctx, s.rdb, store.QueryTerms(q)); err == nil {
			if _, ok, _ := s.lexicalTier(ctx, s.rdb, lexindex.Prune(infos, nd, termInfo.freq), nd, exactScope(f), k); ok {
				tiers++
			}
		}
		checked++
		if len(got) > len(want) {
			t.Errorf("Lexical(%q, %+v, %d) = %d hits, the plain query %d", q, f, k, len(got), len(want))
			continue
		}
		for i := range want {
			if i >= len(got) {
				// Pruning may leave out drawers that match only terms whose
				// IDF is clamped: their scores are next to nothing.
				if want[i].Score > 1e-4 {
					t.Errorf("Lexical(%q, %+v, %d) misses rank %d (score %g)", q, f, k, i+1, want[i].Score)
				}
				continue
			}
			if math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				t.Errorf("Lexical(%q, %+v, %d) rank %d: score %g, plain query %g", q, f, k, i+1, got[i].Score, want[i].Score)
				break
			}
			after := slices.Concat(want[i+1:], next)
			tied := i > 0 && want[i-1].Score-want[i].Score < 1e-5 || len(after) > 0 && want[i].Score-after[0].Score < 1e-5
			if !tied && got[i].ID != want[i].ID {
				t.Errorf("Lexical(%q, %+v, %d) rank %d: %s, plain query %s", q, f, k, i+1, got[i].ID, want[i].ID)
			}
		}
	}
	t.Logf("%d queries, %d answered by the rare-terms tier", checked, tiers)
	if tiers == 0 {
		t.Errorf("no query took the tiered path: the test does not exercise it")
	}
}

// TestLexicalEqualsPlainJoin holds Lexical to one plain FTS5 query over the
// terms it searches, every match joined with drawers and filtered in SQL,
// over a corpus shaped like the Search100k benchmark's (see
// storetest.RareWordsPalace): rare words in few drawers, filler in all of
// them, a middling and a common word, and few distinct lengths, so that
// scores tie often, at the k-th rank too. The scopes hold every drawer,
// most, half, a tenth and few, and date bounds most and few of them, alone
// and with a large scope. Where the rare-terms
// tier does not answer, the ids, order and scores are the plain query's to
// the bit; where it does (it sums the scores another way), the scores are
// within 1e-9 relative and the ids those of the plain query where the
// scores do not tie.
func TestLexicalEqualsPlainJoin(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	for _, u := range storetest.RareWordsPalace(8, 500, 60) {
		if err := s.Apply(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	queries, filters := storetest.RareWordsQueries, storetest.RareWordsFilters
	tiered, tiedAtCut := 0, 0
	for _, q := range queries {
		for _, f := range filters {
			for _, k := range []int{1, 5, 10, 50, 100} {
				label := fmt.Sprintf("Lexical(%q, %+v, %d)", q, f, k)
				got, err := s.Lexical(ctx, q, f, k)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				want := plainLexical(t, s, q, f, k+1) // one more, to see a tie at the cut
				if len(want) > k {
					if want[k-1].Score == want[k].Score {
						tiedAtCut++
					}
					want = want[:k]
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d hits, the plain query %d", label, len(got), len(want))
					continue
				}
				if !lexicalTiered(t, s, q, f, k) {
					for i := range want {
						if got[i] != want[i] {
							t.Errorf("%s rank %d: %+v, the plain query %+v", label, i+1, got[i], want[i])
							break
						}
					}
					continue
				}
				tiered++
				near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
				for i := range want {
					tied := i > 0 && near(want[i-1].Score, want[i].Score) || i+1 < len(want) && near(want[i+1].Score, want[i].Score)
					if got[i].ID != want[i].ID && !tied || got[i].Rank != want[i].Rank || !near(got[i].Score, want[i].Score) {
						t.Errorf("%s rank %d (rare-terms tier): %+v, the plain query %+v", label, i+1, got[i], want[i])
						break
					}
				}
			}
		}
	}
	t.Logf("%d searches, %d answered by the rare-terms tier, %d tied at the k-th rank", len(queries)*len(filters)*5, tiered, tiedAtCut)
	if tiered == 0 {
		t.Errorf("no search took the rare-terms tier: the table does not exercise it")
	}
	if tiedAtCut == 0 {
		t.Errorf("no search tied at the k-th rank: the table does not exercise ties at the cut")
	}
}

// plainLexical is the k best drawers of one FTS5 query over the terms
// Lexical searches for q (those whose IDF is not clamped, see
// lexindex.Prune), every match joined with drawers and held to f in SQL.
func plainLexical(t *testing.T, s *Store, q string, f store.Filter, k int) []store.Scored {
	t.Helper()
	ctx := t.Context()
	infos, n, err := s.termStats(ctx, s.rdb, store.QueryTerms(q))
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, ti := range lexindex.Prune(infos, n, termInfo.freq) {
		terms = append(terms, ti.term)
	}
	if len(terms) == 0 {
		return nil
	}
	where, args := sqlq.Where(sqlq.SQLite, f, 1)
	res, err := scored(ctx, s.rdb, `SELECT d.id, r.score FROM (`+bm25SQL+` LIMIT -1) r JOIN drawers d ON d.rowid = r.rowid
		WHERE 1`+where+` ORDER BY r.score DESC, d.id LIMIT ?`, slices.Concat([]any{matchExpr(terms, store.Filter{})}, args, []any{k})...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// lexicalTiered reports whether the rare-terms tier answers Lexical(q, f, k).
func lexicalTiered(t *testing.T, s *Store, q string, f store.Filter, k int) bool {
	t.Helper()
	ctx := t.Context()
	infos, n, err := s.termStats(ctx, s.rdb, store.QueryTerms(q))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := s.planScope(ctx, s.rdb, f, n)
	if err != nil {
		t.Fatal(err)
	}
	if sc.small {
		return false
	}
	_, ok, err := s.lexicalTier(ctx, s.rdb, lexindex.Prune(infos, n, termInfo.freq), n, sc, k)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestLexicalScopeIsExact makes sure a scope filter never lets through a
// drawer of another wing whose scope token the stemmer maps to the same
// token (possible only for values that are not valid UTF-8).
func TestLexicalScopeIsExact(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	var ins []store.Drawer
	for i, w := range []string{"j", "j\xed", "jed", "n.n.", "n.n.e", "ada"} {
		ins = append(ins, store.Drawer{ID: fmt.Sprint(i), Source: "a.md", Wing: w, Room: w, Agent: w, Text: "shared words"})
	}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md"}, Insert: ins}); err != nil {
		t.Fatal(err)
	}
	for _, d := range ins {
		for _, f := range []store.Filter{{Wing: d.Wing}, {Room: d.Room}, {Agent: d.Agent}} {
			res, err := s.Lexical(ctx, "shared words", f, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].ID != d.ID {
				t.Errorf("Lexical with %+v = %v, want only drawer %s", f, res, d.ID)
			}
		}
	}
}

// FuzzLexical runs arbitrary query text through Lexical: it must never
// fail, and return only drawers that exist.
func FuzzLexical(f *testing.F) {
	for _, s := range []string{`"`, `""`, "*", "NEAR(a b)", "a -b", "(", "AND OR NOT", "'; DROP TABLE drawers; --",
		"heading:foo", "^x", "日本語", "deploy\x00rollback", "{heading text}: x", "e\u0301", "w616461"} {
		f.Add(s, "")
		f.Add("deploy "+s, "ada")
	}
	s, err := Open(context.Background(), filepath.Join(f.TempDir(), "palace.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	ids := map[string]bool{}
	var ins []store.Drawer
	for i, text := range []string{"deploy the rollback now", "near and or not heading text", "日本語 テキスト café", "drop table drawers"} {
		d := store.Drawer{ID: fmt.Sprint(i), Source: "a.md", Wing: []string{"ada", "bob"}[i%2], Heading: "h", Text: text}
		ins = append(ins, d)
		ids[d.ID] = true
	}
	if err := s.Apply(context.Background(), store.FileUpdate{File: store.File{Source: "a.md"}, Insert: ins}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q, wing string) {
		res, err := s.Lexical(context.Background(), q, store.Filter{Wing: wing}, 5)
		if err != nil {
			t.Fatalf("Lexical(%q, wing %q): %v", q, wing, err)
		}
		for _, r := range res {
			if !ids[r.ID] {
				t.Fatalf("Lexical(%q) returned unknown id %q", q, r.ID)
			}
		}
	})
}

// openPair opens one palace twice: warm, opted in to the in-memory lexical
// index, and cold, which always answers from FTS5.
func openPair(t *testing.T) (warm, cold *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "palace.db")
	var err error
	if warm, err = Open(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { warm.Close() })
	if cold, err = Open(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cold.Close() })
	warm.WarmLexical()
	return warm, cold
}

// waitWarm runs searches until the warm index answers for the palace's
// current generation.
func waitWarm(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, ok, err := s.lexicalWarm(t.Context(), []string{"zzz"}, store.Filter{}, 1); err != nil {
			t.Fatal(err)
		} else if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("lexical index not built within a minute")
}

// lexCorpus makes drawers of random length from a Zipf vocabulary with
// some accented and CJK words (which the index tokenizes through SQLite),
// over a few wings, rooms, agents and dates (some undated).
func lexCorpus(rng *rand.Rand, words []string, src string, n int) []store.Drawer {
	word := storetest.Zipf(rng, words)
	extra := []string{"café", "naïve", "Résumé", "日本語", "Straße", "don't", "state-of-the-art", "RUNNING", "runs", "x86_64"}
	var out []store.Drawer
	for i := range n {
		ws := make([]string, 1+rng.IntN(120))
		for j := range ws {
			if rng.IntN(40) == 0 {
				ws[j] = extra[rng.IntN(len(extra))]
			} else {
				ws[j] = word()
			}
		}
		h := 1 + rng.IntN(min(5, len(ws)))
		date := ""
		if rng.IntN(5) > 0 {
			date = fmt.Sprintf("2026-%02d-%02d", 1+rng.IntN(12), 1+rng.IntN(28))
		}
		out = append(out, store.Drawer{
			ID: fmt.Sprintf("%s#%d", src, i), Source: src, Wing: []string{"ada", "bob", "cy", ""}[rng.IntN(4)],
			Room: []string{"recent", "archive"}[rng.IntN(2)], Agent: []string{"ada", "bob"}[rng.IntN(2)], Date: date,
			Heading: strings.Join(ws[:h], " "), Text: strings.Join(ws[h:], " "),
		})
	}
	return out
}

// lexQueries makes n random queries mixing common, middling and rare words
// (and the odd accented one), with filters and k.
func lexQueries(rng *rand.Rand, words []string, n int) (qs []string, fs []store.Filter, ks []int) {
	filters := []store.Filter{{}, {Wing: "bob"}, {Room: "archive", Agent: "ada"}, {Since: "2026-03-10", Until: "2026-08-20"},
		{Wing: "ada", Since: "2026-06-01"}, {Wing: ""}, {Until: "2026-02-01"}, {Wing: "nobody"}}
	for i := range n {
		ws := make([]string, 1+rng.IntN(6))
		for j := range ws {
			switch rng.IntN(7) {
			case 0, 1:
				ws[j] = words[rng.IntN(15)]
			case 2, 3:
				ws[j] = words[15+rng.IntN(100)]
			case 4, 5:
				ws[j] = words[100+rng.IntN(len(words)-100)]
			default:
				ws[j] = []string{"cafe", "café", "naive", "resume", "日本語", "straße", "run", "running", "don't", "x86"}[rng.IntN(10)]
			}
		}
		qs = append(qs, strings.Join(ws, " "))
		fs = append(fs, filters[i%len(filters)])
		ks = append(ks, []int{1, 3, 10, 50}[i%4])
	}
	return qs, fs, ks
}

// sameRanking compares the warm path's answer with FTS5's: the same ids in
// the same order and scores within 1e-9 relative; where FTS5's scores tie
// (within that), the tied ids may come in any order, so those ranks are
// compared as sets.
func sameRanking(t *testing.T, label string, got, want []store.Scored) (maxRel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: warm %d hits, FTS5 %d", label, len(got), len(want))
		return 0
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && close(want[j-1].Score, want[j].Score) {
			j++
		}
		var g, w []string
		for r := i; r < j; r++ {
			if rel := math.Abs(got[r].Score-want[r].Score) / math.Max(math.Abs(want[r].Score), 1e-300); rel > maxRel {
				maxRel = rel
			}
			if !close(got[r].Score, want[r].Score) {
				t.Errorf("%s rank %d: warm score %.17g, FTS5 %.17g", label, r+1, got[r].Score, want[r].Score)
				return maxRel
			}
			g, w = append(g, got[r].ID), append(w, want[r].ID)
		}
		if j == len(want) && j-i > 1 {
			// A tie at the cut: which tied drawers make the top k is
			// arbitrary in both paths, so only their number counts.
			break
		}
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("%s ranks %d-%d: warm %v, FTS5 %v", label, i+1, j, g, w)
		}
		i = j
	}
	return maxRel
}

// compareAll runs every query on both paths, requiring the warm path to
// answer (except for queries holding a phrase term, which go to FTS5).
func compareAll(t *testing.T, warm, cold *Store, qs []string, fs []store.Filter, ks []int) {
	t.Helper()
	ctx := t.Context()
	answered, maxRel := 0, 0.0
	for i, q := range qs {
		_, ok, err := warm.lexicalWarm(ctx, store.QueryTerms(q), fs[i], ks[i])
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			answered++
		}
		got, err := warm.Lexical(ctx, q, fs[i], ks[i])
		if err != nil {
			t.Fatal(err)
		}
		want, err := cold.Lexical(ctx, q, fs[i], ks[i])
		if err != nil {
			t.Fatal(err)
		}
		maxRel = max(maxRel, sameRanking(t, fmt.Sprintf("Lexical(%q, %+v, %d)", q, fs[i], ks[i]), got, want))
	}
	t.Logf("%d queries, %d answered by the warm index, max relative score difference %.3g", len(qs), answered, maxRel)
	if answered < len(qs)*3/4 {
		t.Errorf("only %d of %d queries answered by the warm index", answered, len(qs))
	}
}

func corpusWords() []string {
	return storetest.Vocabulary(rand.New(rand.NewPCG(5, 6)), benchVocab)[:3000]
}

// TestLexicalWarmMatchesFTS5 holds the in-memory index to the FTS5 path
// over random corpora and 200 random queries with filters.
func TestLexicalWarmMatchesFTS5(t *testing.T) {
	ctx := t.Context()
	words := corpusWords()
	for seed := range uint64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			warm, cold := openPair(t)
			rng := rand.New(rand.NewPCG(seed, 77))
			for b := range 6 {
				src := fmt.Sprintf("f%d.md", b)
				if err := cold.Apply(ctx, store.FileUpdate{File: store.File{Source: src}, Insert: lexCorpus(rng, words, src, 300+rng.IntN(300))}); err != nil {
					t.Fatal(err)
				}
			}
			waitWarm(t, warm)
			qs, fs, ks := lexQueries(rng, words, 200)
			compareAll(t, warm, cold, qs, fs, ks)
		})
	}
}

// TestLexicalWarmFollowsWrites checks the index after this process's own
// writes (followed in place, no rebuild) and after another process's
// (noticed by the generation, rebuilt).
func TestLexicalWarmFollowsWrites(t *testing.T) {
	ctx := t.Context()
	words := corpusWords()
	warm, cold := openPair(t)
	rng := rand.New(rand.NewPCG(3, 3))
	for b := range 4 {
		src := fmt.Sprintf("f%d.md", b)
		if err := warm.Apply(ctx, store.FileUpdate{File: store.File{Source: src}, Insert: lexCorpus(rng, words, src, 400)}); err != nil {
			t.Fatal(err)
		}
	}
	waitWarm(t, warm)
	qs, fs, ks := lexQueries(rng, words, 60)
	compareAll(t, warm, cold, qs, fs, ks)

	// Own writes: a re-mine (delete + insert), metadata and heading
	// updates, a deleted file. The index must follow without a rebuild.
	built := warm.lexi.Data
	ins := lexCorpus(rng, words, "f1.md", 200)
	for i := range ins {
		ins[i].ID = fmt.Sprintf("f1.md#new%d", i)
	}
	var del []string
	for i := range 150 {
		del = append(del, fmt.Sprintf("f1.md#%d", i))
	}
	var upd []store.Drawer
	for i := 200; i < 260; i++ {
		upd = append(upd, store.Drawer{ID: fmt.Sprintf("f1.md#%d", i), Source: "f1.md", Wing: "cy", Room: "archive", Agent: "bob",
			Date: "2026-05-05", Heading: words[rng.IntN(200)] + " " + words[rng.IntN(20)]})
	}
	if err := warm.Apply(ctx, store.FileUpdate{File: store.File{Source: "f1.md"}, Delete: del, Insert: ins, Update: upd}); err != nil {
		t.Fatal(err)
	}
	if err := warm.DeleteFile(ctx, "f2.md"); err != nil {
		t.Fatal(err)
	}
	if err := warm.SetModel(ctx, "m", 4); err != nil { // a write that leaves the text alone
		t.Fatal(err)
	}
	if warm.lexi.Data != built {
		t.Fatal("own writes made the index rebuild instead of following")
	}
	compareAll(t, warm, cold, qs, fs, ks)

	// Enough deletes to compact.
	for b := 4; b < 8; b++ {
		src := fmt.Sprintf("f%d.md", b)
		if err := warm.Apply(ctx, store.FileUpdate{File: store.File{Source: src}, Insert: lexCorpus(rng, words, src, 400)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []string{"f0.md", "f3.md", "f5.md"} {
		if err := warm.DeleteFile(ctx, src); err != nil {
			t.Fatal(err)
		}
	}
	// 3400 rows were added in all; a compaction leaves fewer slots.
	if d := warm.lexi.Data; d != built || d.Dead() >= 1024 || d.Slots() != d.Live()+d.Dead() || d.Slots() >= 3400 {
		t.Fatalf("index rebuilt (%v) or not compacted (%d slots, %d live, %d dead)", d != built, d.Slots(), d.Live(), d.Dead())
	}
	compareAll(t, warm, cold, qs, fs, ks)

	// Another process writes: the warm store must notice and rebuild.
	if err := cold.Apply(ctx, store.FileUpdate{File: store.File{Source: "g.md"}, Insert: lexCorpus(rng, words, "g.md", 300)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := warm.lexicalWarm(ctx, []string{words[0]}, store.Filter{}, 1); err != nil || ok {
		t.Fatalf("warm index answered (%v, %v) for a generation it has not seen", ok, err)
	}
	waitWarm(t, warm)
	compareAll(t, warm, cold, qs, fs, ks)

	// Reset, in-process.
	if err := warm.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := warm.Apply(ctx, store.FileUpdate{File: store.File{Source: "h.md"}, Insert: lexCorpus(rng, words, "h.md", 300)}); err != nil {
		t.Fatal(err)
	}
	waitWarm(t, warm)
	compareAll(t, warm, cold, qs, fs, ks)
}

// TestLexicalWarmClose makes sure closing a store stops a build in flight.
func TestLexicalWarmClose(t *testing.T) {
	warm, cold := openPair(t)
	words := corpusWords()
	if err := cold.Apply(t.Context(), store.FileUpdate{File: store.File{Source: "a.md"}, Insert: lexCorpus(rand.New(rand.NewPCG(1, 1)), words, "a.md", 500)}); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Lexical(context.Background(), words[3], store.Filter{}, 3); err != nil {
		t.Fatal(err)
	}
	if err := warm.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPlanScope holds which filters make Lexical run the full query at
// once (a wing, room or agent of at most tierBudget drawers), which scope
// tokens go into MATCH (those of a value at most maxTokenShare of the
// drawers have), and the share of MATCH's rows expected in scope.
func TestPlanScope(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	const n = 16000 // a fifth is above tierBudget
	u := store.FileUpdate{File: store.File{Source: "f.md"}}
	for i := range n {
		wing := "big" // n-3 drawers
		if i < 3 {
			wing = "small"
		}
		room := []string{"even", "odd"}[i%2]
		agent := "most" // 80 %
		if i%5 == 0 {
			agent = "fifth"
		}
		u.Insert = append(u.Insert, store.Drawer{ID: fmt.Sprintf("f.md#%d", i), Source: "f.md", Wing: wing, Room: room, Agent: agent, Text: "some words"})
	}
	if err := s.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	big := float64(n-3) / n
	for _, tc := range []struct {
		f         store.Filter
		wantSmall bool
		wantMatch store.Filter
		wantShare float64
	}{
		{store.Filter{}, false, store.Filter{}, 1},
		{store.Filter{Since: "2026-01-01"}, false, store.Filter{}, 1},
		{store.Filter{Wing: "big"}, false, store.Filter{}, big},
		{store.Filter{Room: "odd"}, false, store.Filter{}, 0.5},
		{store.Filter{Agent: "most", Room: "even", Since: "2026-01-01"}, false, store.Filter{}, 0.4},
		{store.Filter{Agent: "fifth"}, false, store.Filter{Agent: "fifth"}, 1},
		{store.Filter{Agent: "fifth", Wing: "big"}, false, store.Filter{Agent: "fifth"}, big},
		{store.Filter{Wing: "small"}, true, store.Filter{Wing: "small"}, 1},
		{store.Filter{Wing: "small", Room: "odd"}, true, store.Filter{Wing: "small"}, 0.5},
		{store.Filter{Wing: "nobody", Agent: "most"}, true, store.Filter{Wing: "nobody"}, 0.8},
	} {
		sc, err := s.planScope(ctx, s.rdb, tc.f, n)
		if err != nil {
			t.Fatal(err)
		}
		if sc.f != tc.f || sc.small != tc.wantSmall || sc.match != tc.wantMatch || math.Abs(sc.share-tc.wantShare) > 1e-12 {
			t.Errorf("planScope(%+v) = %+v; want small %v, match %+v, share %g", tc.f, sc, tc.wantSmall, tc.wantMatch, tc.wantShare)
		}
	}
}

// TestLexicalScopeIsPostFilter holds a search scoped to a wing, room or
// agent to the unscoped search with the drawers out of scope taken out (the
// same drawers in the same order, the same scores), for scopes holding
// every drawer, most of them, half and few, alone, combined and with date
// bounds. The drawers out of the "most" scope hold the rare words often, so
// that the best unscoped matches are out of scope and a search that takes
// the best unscoped rows and keeps those in scope must look deeper.
func TestLexicalScopeIsPostFilter(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	const n = 6000
	rng := rand.New(rand.NewPCG(5, 6))
	words := storetest.Vocabulary(rng, benchVocab)[:2000]
	word := storetest.Zipf(rng, words)
	rare := func() string { return words[1500+rng.IntN(8)] }
	byID := map[string]store.Drawer{}
	for b := range n / 1000 {
		src := fmt.Sprintf("f%d.md", b)
		u := store.FileUpdate{File: store.File{Source: src}}
		for i := range 1000 {
			at := b*1000 + i
			d := store.Drawer{ID: fmt.Sprintf("%s#%d", src, i), Source: src, Room: "recent", Agent: "ada",
				Wing: []string{"even", "odd"}[at%2], Date: fmt.Sprintf("2026-01-%02d", 1+at%28)}
			if at%50 == 1 {
				d.Wing = "few" // 2 %
			}
			ws := make([]string, 10+rng.IntN(60))
			for j := range ws {
				ws[j] = word()
			}
			if at%10 == 3 { // 10 %: out of the agent's scope, and rich in rare words
				d.Agent = "bob"
				for j := 0; j < len(ws); j += 3 {
					ws[j] = rare()
				}
			}
			d.Heading, d.Text = strings.Join(ws[:3], " "), strings.Join(ws[3:], " ")
			byID[d.ID] = d
			u.Insert = append(u.Insert, d)
		}
		if err := s.Apply(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	qrng := rand.New(rand.NewPCG(7, 8))
	var queries []string
	unscoped := map[string][]store.Scored{}
	for qi := range 30 {
		ws := make([]string, 1+qrng.IntN(4))
		for j := range ws {
			ws[j] = words[[]int{qrng.IntN(10), qrng.IntN(100), 100 + qrng.IntN(1900)}[qrng.IntN(3)]]
		}
		if qi%2 == 0 {
			ws[0] = words[1500+qrng.IntN(8)]
		}
		q := strings.Join(ws, " ")
		all, err := s.Lexical(ctx, q, store.Filter{}, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		queries, unscoped[q] = append(queries, q), all
	}
	for _, tc := range []struct {
		name string
		f    store.Filter
	}{
		{"all", store.Filter{Room: "recent"}},
		{"most", store.Filter{Agent: "ada"}},
		{"half", store.Filter{Wing: "odd"}},
		{"few", store.Filter{Wing: "few"}},
		{"most and half", store.Filter{Agent: "ada", Wing: "even"}},
		{"all and most", store.Filter{Room: "recent", Agent: "ada"}},
		{"most and few", store.Filter{Agent: "ada", Wing: "few"}},
		{"most, dated", store.Filter{Agent: "ada", Since: "2026-01-05", Until: "2026-01-20"}},
		{"none", store.Filter{Wing: "nobody"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for qi, q := range queries {
				k := []int{1, 5, 10, 100, math.MaxInt}[qi%5]
				got, err := s.Lexical(ctx, q, tc.f, k)
				if err != nil {
					t.Fatal(err)
				}
				var want []store.Scored
				for _, sc := range unscoped[q] {
					if tc.f.Matches(byID[sc.ID]) && len(want) < k {
						sc.Rank = len(want) + 1
						want = append(want, sc)
					}
				}
				if len(got) != len(want) {
					t.Errorf("Lexical(%q, %+v, %d): %d hits, the unscoped search post-filtered %d", q, tc.f, k, len(got), len(want))
					continue
				}
				// Scores within 1e-9 relative (the rare-terms tier sums
				// them another way); ids where the scores are not tied.
				near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
				for i := range want {
					tied := i > 0 && near(want[i-1].Score, want[i].Score) || i+1 < len(want) && near(want[i+1].Score, want[i].Score)
					if got[i].ID != want[i].ID && !tied || got[i].Rank != want[i].Rank || !near(got[i].Score, want[i].Score) {
						t.Errorf("Lexical(%q, %+v, %d) rank %d: %+v, the unscoped search post-filtered %+v", q, tc.f, k, i+1, got[i], want[i])
						break
					}
				}
			}
		})
	}
}
