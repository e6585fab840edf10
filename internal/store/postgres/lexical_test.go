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
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	pg, err := postgres.Open(ctx, postgres.Options{DSN: pgtest.Schema(t, pgtest.EnvPostgres)})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	id := 0
	for f := range 40 {
		src := fmt.Sprintf("hive/agents/a%d/memory.md", f%5)
		src = strings.Replace(src, "memory.md", fmt.Sprintf("m%d.md", f), 1)
		wing := fmt.Sprintf("a%d", f%5)
		u := store.FileUpdate{File: store.File{Source: src, Hash: src, Size: 1, MinedAt: time.Now(), Wing: wing, Agent: wing}}
		for j := range 50 {
			var h, b []string
			for range 1 + rng.IntN(3) {
				h = append(h, word())
			}
			for range 5 + rng.IntN(40) {
				b = append(b, word())
			}
			u.Insert = append(u.Insert, store.Drawer{
				ID: fmt.Sprintf("d%05d", id), Wing: wing, Room: "recent", Agent: wing, Source: src,
				Heading: strings.Join(h, " "), LineStart: j + 1, LineEnd: j + 1, Hash: fmt.Sprint(id),
				Text: strings.Join(b, " "),
			})
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
				want, err := sq.Lexical(ctx, query, f, k)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.Lexical(ctx, query, f, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("query %d %q %+v k=%d: %d results, SQLite %d", qi, query, f, k, len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if math.Abs(g.Score-w.Score) > 1e-9*math.Abs(w.Score) {
						t.Fatalf("query %q %+v k=%d: result %d scores %v, SQLite %v", query, f, k, i, g.Score, w.Score)
					}
					tied := (i > 0 && math.Abs(w.Score-want[i-1].Score) <= 1e-9*math.Abs(w.Score)) ||
						(i+1 < len(want) && math.Abs(w.Score-want[i+1].Score) <= 1e-9*math.Abs(w.Score))
					if g.ID != w.ID && !tied {
						t.Fatalf("query %q %+v k=%d: result %d is %s, SQLite %s", query, f, k, i, g.ID, w.ID)
					}
				}
			}
		}
	}
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
