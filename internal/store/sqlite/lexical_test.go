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

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/lexindex"
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
		want, err := s.topK(ctx, s.rdb, bm25SQL, []any{matchExpr(store.QueryTerms(q), store.Filter{})}, f, k+1)
		if err != nil {
			t.Fatal(err)
		}
		next := want[min(k, len(want)):]
		want = want[:min(k, len(want))]
		if infos, nd, err := s.termStats(ctx, s.rdb, store.QueryTerms(q)); err == nil {
			if _, ok, _ := s.lexicalTier(ctx, s.rdb, lexindex.Prune(infos, nd, termInfo.freq), nd, f, k); ok {
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
