package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest/testenv"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// The benchmark palace: 100 000 drawers of 60-100 words drawn from a
// Zipf-distributed vocabulary (so that BM25 sees realistic document
// frequencies), with random unit 384-d vectors, spread over 50 wings. It is
// built once per test binary and shared by every benchmark.
const (
	benchDrawers = 100_000
	benchDim     = 384
	benchWings   = 50
	benchBatch   = 1000 // drawers per Apply: the bulk path
	benchVocab   = 30_000
)

var (
	benchOnce  sync.Once
	benchDir   string
	benchStore *Store
	benchErr   error
	benchWords []string
	benchZipf  func() string
)

func TestMain(m *testing.M) {
	testenv.Clear()
	code := m.Run()
	if warmStore != nil {
		warmStore.Close()
	}
	if benchStore != nil {
		benchStore.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchPalace(b *testing.B) *Store {
	b.Helper()
	benchOnce.Do(func() {
		start := time.Now()
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(2026, 11))
		benchWords = storetest.Vocabulary(rng, benchVocab)
		benchZipf = storetest.Zipf(rng, benchWords)
		// HIVEMEM_BENCH_PALACE keeps the palace at a fixed path across runs
		// (built on the first, reused after), for iterating on query plans.
		path := os.Getenv("HIVEMEM_BENCH_PALACE")
		if path == "" {
			if benchDir, benchErr = os.MkdirTemp("", "hivemem-bench-"); benchErr != nil {
				return
			}
			path = filepath.Join(benchDir, "palace.db")
		}
		if benchStore, benchErr = Open(ctx, path); benchErr != nil {
			return
		}
		if st, err := benchStore.Stats(ctx); err == nil && st.Drawers >= benchDrawers {
			return
		}
		if benchErr = benchStore.SetModel(ctx, "bench", benchDim); benchErr != nil {
			return
		}
		for batch := 0; batch < benchDrawers/benchBatch; batch++ {
			wing := fmt.Sprintf("agent%02d", batch%benchWings)
			src := fmt.Sprintf("hive/agents/%s/memory-%d.md", wing, batch)
			u := store.FileUpdate{File: store.File{Source: src, Hash: "x", MinedAt: time.Now(), Wing: wing, Agent: wing}}
			for i := range benchBatch {
				n := 60 + rng.IntN(41)
				words := make([]string, n)
				for j := range words {
					words[j] = benchZipf()
				}
				u.Insert = append(u.Insert, store.Drawer{
					ID: fmt.Sprintf("%s#%d", src, i), Wing: wing, Room: []string{"recent", "archive", "condensed"}[i%3],
					Agent: wing, Source: src, Heading: strings.Join(words[:4], " "),
					LineStart: 1 + 10*i, LineEnd: 9 + 10*i, Date: fmt.Sprintf("2026-%02d-%02d", 1+i%12, 1+i%28),
					Hash: fmt.Sprintf("%x", rng.Uint64()), Text: strings.Join(words[4:], " "),
					Vector: storetest.UnitVector(rng, benchDim),
				})
			}
			if benchErr = benchStore.Apply(ctx, u); benchErr != nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "built %d-drawer benchmark palace in %v\n", benchDrawers, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatalf("build benchmark palace: %v", benchErr)
	}
	return benchStore
}

// benchQueries are 16 queries of 3-6 words. Words are drawn with the
// corpus's own Zipf law but from rank 50 down: in English the 50 most
// frequent words are almost all function words, which QueryTerms drops as
// stopwords, so what reaches the index is content words (here with document
// frequencies from 15% down). withCommon adds one of the 20 most frequent
// words to each query (in 35-99% of drawers): the worst case.
func benchQueries(withCommon bool) []string {
	rng := rand.New(rand.NewPCG(7, 7))
	word := storetest.Zipf(rng, benchWords[50:])
	qs := make([]string, 16)
	for i := range qs {
		ws := make([]string, 3+rng.IntN(4))
		for j := range ws {
			ws[j] = word()
		}
		if withCommon {
			ws[0] = benchWords[rng.IntN(20)]
		}
		qs[i] = strings.Join(ws, " ")
	}
	return qs
}

// timed runs op b.N times and reports the median and 90th percentile
// latency next to the mean. prep, if not nil, runs before each op outside
// the timing.
func timed(b *testing.B, prep, op func(i int)) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if prep != nil {
			b.StopTimer()
			prep(i)
			b.StartTimer()
		}
		t0 := time.Now()
		op(i)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "p90-ms")
	b.ReportMetric(float64(b.Elapsed())/1e6/float64(b.N), "ms/op")
}

func benchLexical(b *testing.B, withCommon, wing bool) {
	s := benchPalace(b)
	qs := benchQueries(withCommon)
	ctx := context.Background()
	timed(b, nil, func(i int) {
		var f store.Filter
		if wing {
			f.Wing = fmt.Sprintf("agent%02d", i%benchWings)
		}
		if _, err := s.Lexical(ctx, qs[i%len(qs)], f, 10); err != nil {
			b.Fatalf("Lexical(%q, %+v): %v", qs[i%len(qs)], f, err)
		}
	})
}

func BenchmarkLexical100k(b *testing.B)           { benchLexical(b, false, false) }
func BenchmarkLexical100kWarm(b *testing.B)       { benchLexicalWarm(b, false, false) }
func BenchmarkLexical100kWarmWing(b *testing.B)   { benchLexicalWarm(b, false, true) }
func BenchmarkLexical100kWarmCommon(b *testing.B) { benchLexicalWarm(b, true, false) }
func BenchmarkLexical100kWing(b *testing.B)       { benchLexical(b, false, true) }
func BenchmarkLexical100kCommon(b *testing.B)     { benchLexical(b, true, false) }

var (
	warmOnce  sync.Once
	warmStore *Store
	warmErr   error
)

// benchWarm opens the benchmark palace a second time, opted in to the
// in-memory lexical index, and waits for the index; a second Store leaves
// the FTS5 benchmarks on the shared one unaffected.
func benchWarm(b *testing.B) *Store {
	b.Helper()
	s := benchPalace(b)
	warmOnce.Do(func() {
		ctx := context.Background()
		if warmStore, warmErr = Open(ctx, s.Path()); warmErr != nil {
			return
		}
		warmStore.WarmLexical()
		start := time.Now()
		for {
			_, ok, err := warmStore.lexicalWarm(ctx, []string{"x"}, store.Filter{}, 1)
			if warmErr = err; err != nil || ok {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Fprintf(os.Stderr, "built the lexical index in the background in %v\n", time.Since(start).Round(time.Millisecond))
	})
	if warmErr != nil {
		b.Fatalf("warm lexical index: %v", warmErr)
	}
	return warmStore
}

// benchLexicalWarm is benchLexical answered by the in-memory index, which
// is first checked to answer every query, with FTS5's ranking.
func benchLexicalWarm(b *testing.B, withCommon, wing bool) {
	s := benchWarm(b)
	qs := benchQueries(withCommon)
	ctx := context.Background()
	filter := func(i int) store.Filter {
		var f store.Filter
		if wing {
			f.Wing = fmt.Sprintf("agent%02d", i%benchWings)
		}
		return f
	}
	for i, q := range qs {
		got, ok, err := s.lexicalWarm(ctx, store.QueryTerms(q), filter(i), 10)
		if err != nil || !ok {
			b.Fatalf("lexicalWarm(%q) = %v, %v", q, ok, err)
		}
		want, err := benchStore.Lexical(ctx, q, filter(i), 10)
		if err != nil {
			b.Fatal(err)
		}
		for r := range want {
			if r >= len(got) || got[r].ID != want[r].ID || math.Abs(got[r].Score-want[r].Score) > 1e-9*want[r].Score {
				b.Fatalf("Lexical(%q) warm %v, FTS5 %v", q, got, want)
			}
		}
	}
	timed(b, nil, func(i int) {
		if _, err := s.Lexical(ctx, qs[i%len(qs)], filter(i), 10); err != nil {
			b.Fatalf("Lexical(%q): %v", qs[i%len(qs)], err)
		}
	})
}

// BenchmarkLexicalBuild100k is the one-off cost of building the in-memory
// lexical index (in the background, in a process that opted in), and the
// heap it occupies.
func BenchmarkLexicalBuild100k(b *testing.B) {
	s := benchPalace(b)
	ctx := context.Background()
	var heap uint64
	timed(b, nil, func(int) {
		b.StopTimer()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		d, err := buildLex(ctx, s)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapInuse - before.HeapInuse
		runtime.KeepAlive(d)
		b.StartTimer()
	})
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// benchPlain is the baseline Lexical improves on: one FTS5 query over every
// term, ranked by bm25, cut to k by FTS5.
func benchPlain(b *testing.B, withCommon bool) {
	s := benchPalace(b)
	qs := benchQueries(withCommon)
	ctx := context.Background()
	timed(b, nil, func(i int) {
		match := matchExpr(store.QueryTerms(qs[i%len(qs)]), store.Filter{})
		if _, err := s.topK(ctx, s.rdb, bm25SQL, []any{match}, exactScope(store.Filter{}), 10); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkLexical100kPlain(b *testing.B)       { benchPlain(b, false) }
func BenchmarkLexical100kCommonPlain(b *testing.B) { benchPlain(b, true) }

// vectorQueries is 8 random query vectors, drawn with seed, after a first
// search that loads the vectors outside the timing.
func vectorQueries(b *testing.B, s *Store, seed uint64) [][]float32 {
	b.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	qs := make([][]float32, 8)
	for i := range qs {
		qs[i] = storetest.UnitVector(rng, benchDim)
	}
	if _, err := s.Vector(context.Background(), qs[0], store.Filter{}, 10); err != nil {
		b.Fatal(err)
	}
	return qs
}

func BenchmarkVector100k(b *testing.B) {
	s := benchPalace(b)
	ctx := context.Background()
	qs := vectorQueries(b, s, 3)
	timed(b, nil, func(i int) {
		res, err := s.Vector(ctx, qs[i%len(qs)], store.Filter{}, 10)
		if err != nil || len(res) != 10 {
			b.Fatalf("Vector = %d hits, %v", len(res), err)
		}
	})
}

func BenchmarkVector100kWing(b *testing.B) {
	s := benchPalace(b)
	ctx := context.Background()
	qs := vectorQueries(b, s, 4)
	timed(b, nil, func(i int) {
		f := store.Filter{Wing: fmt.Sprintf("agent%02d", i%benchWings)}
		res, err := s.Vector(ctx, qs[i%len(qs)], f, 10)
		if err != nil || len(res) != 10 {
			b.Fatalf("Vector(%+v) = %d hits, %v", f, len(res), err)
		}
	})
}

// BenchmarkVectorLoad100k is the one-off cost of the first vector search
// in a process (or the first after another process wrote).
func BenchmarkVectorLoad100k(b *testing.B) {
	s := benchPalace(b)
	ctx := context.Background()
	timed(b, nil, func(int) {
		s.vec.mu.Lock()
		err := s.vec.load(ctx, s.rdb)
		s.vec.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	})
	if n := s.vec.idx.Len(); n < benchDrawers {
		b.Fatalf("loaded %d vectors", n)
	}
}

// BenchmarkApply100 re-mines one 100-drawer file in the 100k palace: the
// previous 100 drawers are deleted and 100 new ones (with vectors) inserted.
func BenchmarkApply100(b *testing.B) {
	s := benchPalace(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 5))
	const src = "hive/agents/bench/apply.md"
	var prev []string
	mk := func(round int) store.FileUpdate {
		u := store.FileUpdate{File: store.File{Source: src, Wing: "bench", Agent: "bench"}, Delete: prev}
		prev = nil
		for i := range 100 {
			words := make([]string, 80)
			for j := range words {
				words[j] = benchZipf()
			}
			d := store.Drawer{ID: fmt.Sprintf("apply-%d-%d", round, i), Wing: "bench", Agent: "bench", Source: src,
				Heading: words[0], Text: strings.Join(words[1:], " "), Vector: storetest.UnitVector(rng, benchDim)}
			u.Insert = append(u.Insert, d)
			prev = append(prev, d.ID)
		}
		return u
	}
	var u store.FileUpdate
	timed(b, func(i int) { u = mk(i) }, func(int) {
		if err := s.Apply(ctx, u); err != nil {
			b.Fatal(err)
		}
	})
	if err := s.DeleteFile(ctx, src); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSessionReads is storetest.BenchSessionReads on SQLite: a
// search's reads of its candidate conversations, one statement per
// conversation against one for all.
func BenchmarkSessionReads(b *testing.B) {
	path := filepath.Join(b.TempDir(), "palace.db")
	storetest.BenchSessionReads(b, storetest.MustOpen(b, func() (*Store, error) { return Open(b.Context(), path) }))
}
