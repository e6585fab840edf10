package sqlite

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
)

func TestExpLexical(t *testing.T) {
	if os.Getenv("HIVEMEM_BENCH_PALACE") == "" {
		t.Skip()
	}
	var s *Store
	testing.Benchmark(func(b *testing.B) { s = benchPalace(b) })
	ctx := context.Background()
	for _, q := range benchQueries() {
		terms := store.QueryTerms(q)
		infos, n, _ := s.termStats(ctx, terms)
		infos = prune(infos, n)
		t1 := time.Now()
		_, ok, err := s.lexicalTier(ctx, infos, n, store.Filter{}, 10)
		dt := time.Since(t1)
		if err != nil {
			t.Fatal(err)
		}
		best := time.Hour
		var got []store.Scored
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			got, _ = s.Lexical(ctx, q, store.Filter{}, 10)
			best = min(best, time.Since(t0))
		}
		var kept []string
		for _, ti := range infos {
			kept = append(kept, ti.term)
		}
		t0 := time.Now()
		want, _ := s.lexicalFull(ctx, terms, store.Filter{}, 10)
		full := time.Since(t0)
		same := len(got) == len(want)
		for i := range got {
			if !same || got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				same = false
			}
		}
		fmt.Printf("%-10v tier=%v(%v) full=%v same=%v %q kept=%v\n", best, ok, dt, full, same, q, infos)
	}
}
