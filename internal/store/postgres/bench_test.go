package postgres_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// TestStoreBenchmark compares the backends on the same synthetic palace in
// the same run: HIVEMEM_STORE_BENCH=100000 drawers (60-100 words from a
// Zipf vocabulary of 30 000 words, headings of 3-6 words, random unit
// 384-d vectors, 50 wings, files of 100 drawers) are mined into SQLite and
// into PostgreSQL (exact vectors), and the same queries are timed on each
// (the HNSW path is TestHNSWRecall's), then again on a second PostgreSQL
// handle with the warm lexical index (WarmLexical). It only runs when
// HIVEMEM_STORE_BENCH is set (the figures in the README come from it):
//
//	eval "$(scripts/pg-test.sh start)"
//	HIVEMEM_STORE_BENCH=100000 go test -run TestStoreBenchmark -v -timeout 60m ./internal/store/postgres
func TestStoreBenchmark(t *testing.T) {
	n, rng, word, files := synthPalace(t, "HIVEMEM_STORE_BENCH", 11)
	ctx := t.Context()
	queries := make([]string, 200)
	qvecs := make([][]float32, len(queries))
	for i := range queries {
		var q []string
		for range 2 + rng.IntN(3) {
			q = append(q, word())
		}
		queries[i] = strings.Join(q, " ")
		qvecs[i] = storetest.UnitVector(rng, 384)
	}

	sq := openSQLite(t)
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	pg := openPG(t, postgres.Options{DSN: dsn})

	// hybrid is a hybrid search's store work: both candidate lists.
	hybrid := func(s store.Store) func(i int) error {
		return func(i int) error {
			if _, err := s.Lexical(ctx, queries[i], store.Filter{}, 100); err != nil {
				return err
			}
			_, err := s.Vector(ctx, qvecs[i], store.Filter{}, 100)
			return err
		}
	}

	t.Logf("%d drawers, %d files, %d queries", n, len(files), len(queries))
	t.Logf("| backend | mining (drawers/s) | lexical p50 / p95 | vector p50 / p95 | hybrid p50 / p95 | first vector search |")
	t.Logf("|---|---|---|---|---|---|")
	for _, s := range []store.Store{sq, pg} {
		rate := float64(n) / mineAll(t, s, files).Seconds()
		t0 := time.Now()
		if _, err := s.Vector(ctx, qvecs[0], store.Filter{}, 10); err != nil {
			t.Fatal(err)
		}
		first := time.Since(t0)
		lex := timeEach(t, queries, func(i int) error { _, err := s.Lexical(ctx, queries[i], store.Filter{}, 10); return err })
		vec := timeEach(t, queries, func(i int) error { _, err := s.Vector(ctx, qvecs[i], store.Filter{}, 10); return err })
		hyb := timeEach(t, queries, hybrid(s))
		t.Logf("| %s | %.0f | %s | %s | %s | %s |", s.Backend(), rate, lex, vec, hyb, first.Round(time.Millisecond))
	}
	// A second PostgreSQL process, long-running (WarmLexical), on the
	// palace just mined: its first search starts the index's build.
	warm := openPG(t, postgres.Options{DSN: dsn})
	warm.WarmLexical()
	t0 := time.Now()
	if _, err := warm.Lexical(ctx, queries[0], store.Filter{}, 10); err != nil {
		t.Fatal(err)
	}
	warm.WaitLexWarm()
	build := time.Since(t0)
	lex := timeEach(t, queries, func(i int) error { _, err := warm.Lexical(ctx, queries[i], store.Filter{}, 10); return err })
	hyb := timeEach(t, queries, hybrid(warm))
	if answered, _, _ := warm.LexWarmStats(); answered < int64(2*len(queries)) {
		t.Fatalf("the warm index answered %d of %d searches", answered, 2*len(queries))
	}
	t.Logf("| postgres, warm lexical (built in %s) | | %s | | %s | |", build.Round(time.Millisecond), lex, hyb)
	// Same ranking on both, query by query.
	agree, agreeWarm := 0, 0
	for _, q := range queries {
		a := lexical(t, sq, q, store.Filter{}, 10)
		b := lexical(t, pg, q, store.Filter{}, 10)
		c := lexical(t, warm, q, store.Filter{}, 10)
		same := func(x, y store.Scored) bool { return x.ID == y.ID }
		if slices.EqualFunc(a, b, same) {
			agree++
		}
		if slices.EqualFunc(b, c, same) {
			agreeWarm++
		}
	}
	t.Logf("lexical top 10 identical on %d of %d queries (SQLite, PostgreSQL SQL); warm and SQL identical on %d", agree, len(queries), agreeWarm)

}

// TestVectorRefreshBenchmark times what a search pays after another
// process wrote, in exact mode: HIVEMEM_STORE_BENCH_REFRESH drawers (the
// synthetic palace of TestStoreBenchmark) are mined through one Store,
// another Store searches, and then, for each round, the first writes one
// Apply replacing a file's 100 drawers (100 deleted, 100 inserted) and the
// second's next Vector search is timed: incremental (the cache fetches the
// changed rows and tombstones) against a full reload (the cache dropped
// first, as every such search did before). Runs only when
// HIVEMEM_STORE_BENCH_REFRESH is set:
//
//	eval "$(scripts/pg-test.sh start)"
//	HIVEMEM_STORE_BENCH_REFRESH=100000 go test -run TestVectorRefreshBenchmark -v -timeout 60m ./internal/store/postgres
func TestVectorRefreshBenchmark(t *testing.T) {
	n, rng, word, files := synthPalace(t, "HIVEMEM_STORE_BENCH_REFRESH", 13)
	ctx := t.Context()
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	open := func() *postgres.Store { return openPG(t, postgres.Options{DSN: dsn, VectorMode: "exact"}) }
	w, r := open(), open()
	t.Logf("%d drawers mined at %.0f drawers/s", n, float64(n)/mineAll(t, w, files).Seconds())
	q := storetest.UnitVector(rng, 384)
	search := func() time.Duration {
		t0 := time.Now()
		res, err := r.Vector(ctx, q, store.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 10 {
			t.Fatalf("%d results", len(res))
		}
		return time.Since(t0)
	}
	t.Logf("first search (full load): %s", search().Round(time.Millisecond))
	var steady []time.Duration
	for range 20 {
		steady = append(steady, search())
	}
	// rewrite replaces the drawers of files[i] with 100 new ones.
	round := 0
	rewrite := func(i int) time.Duration {
		round++
		u := files[i%len(files)]
		var del []string
		for _, d := range u.Insert {
			del = append(del, d.ID)
		}
		fresh := synthFiles(rng, word, len(u.Insert))[0].Insert
		for j := range fresh {
			fresh[j].ID = fmt.Sprintf("%s-r%d", del[j], round)
			fresh[j].Source, fresh[j].Wing, fresh[j].Agent = u.File.Source, u.File.Wing, u.File.Agent
		}
		u.Delete, u.Insert = del, fresh
		files[i%len(files)] = u
		t0 := time.Now()
		if err := w.Apply(ctx, u); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	const rounds = 10
	var incr, full, applies []time.Duration
	full0, incr0 := r.VecRefreshes()
	for i := range rounds {
		applies = append(applies, rewrite(2*i))
		incr = append(incr, search())
		rewrite(2*i + 1)
		r.DropVecCache()
		full = append(full, search())
	}
	fullN, incrN := r.VecRefreshes()
	if fullN-full0 != rounds || incrN-incr0 != rounds {
		t.Fatalf("%d full reloads and %d incremental refreshes, want %d of each", fullN-full0, incrN-incr0, rounds)
	}
	t.Logf("%d drawers; Apply replacing 100 drawers p50 %s; search without a write p50 %s", n, pct(applies, 50), pct(steady, 50))
	t.Logf("first search after the Apply: incremental p50 %s (max %s), full reload p50 %s (max %s)",
		pct(incr, 50), pct(incr, 100), pct(full, 50), pct(full, 100))
	t.Logf("incremental, round by round: %v", roundMS(incr))
}

// TestHNSWRecall measures the pgvector path against exact search on the
// same queries, in PGlite with pgvector (WASM, so slow to load: the palace
// is HIVEMEM_STORE_BENCH_HNSW drawers, default 5000). Two vector sets:
// uniform random unit vectors (HNSW's worst case: no structure to follow)
// and clustered ones (64 centres, each vector about 0.7 cosine from its
// centre, closer to how text embeddings fall). For each hnsw.ef_search
// setting it reports recall@10 (a search for 10) and recall@100 (the
// candidate pool hybrid search asks for) and the p50 of each. Runs only
// when HIVEMEM_STORE_BENCH_HNSW is set:
//
//	eval "$(scripts/pg-test.sh start)"
//	HIVEMEM_STORE_BENCH_HNSW=5000 go test -run TestHNSWRecall -v -timeout 60m ./internal/store/postgres
func TestHNSWRecall(t *testing.T) {
	nh, _ := strconv.Atoi(os.Getenv("HIVEMEM_STORE_BENCH_HNSW"))
	if nh <= 0 {
		t.Skip("HIVEMEM_STORE_BENCH_HNSW not set")
	}
	ctx := t.Context()
	const nq = 50
	t.Logf("| vectors | ef_search | recall@10 | p50 (k=10) | recall@100 | p50 (k=100) | exact p50 (k=100) |")
	t.Logf("|---|---|---|---|---|---|---|")
	for _, set := range []string{"random", "clustered"} {
		rng := rand.New(rand.NewPCG(2026, 12))
		vec := func() []float32 { return storetest.UnitVector(rng, 384) }
		if set == "clustered" {
			centres := make([][]float32, 64)
			for i := range centres {
				centres[i] = storetest.UnitVector(rng, 384)
			}
			vec = func() []float32 { return near(rng, centres[rng.IntN(len(centres))], 1.0) }
		}
		files := synthFiles(rng, func() string { return "w" }, nh)
		for _, u := range files {
			for i := range u.Insert {
				u.Insert[i].Vector = vec()
			}
		}
		qvecs := make([][]float32, nq)
		for i := range qvecs {
			qvecs[i] = vec()
		}
		dsn := pgtest.Schema(t, pgtest.EnvPGlite)
		hn, err := postgres.Open(ctx, postgres.Options{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		if hn.VectorMode() != postgres.ModePGVector {
			t.Fatalf("PGlite palace in %s mode, want %s", hn.VectorMode(), postgres.ModePGVector)
		}
		mineAll(t, hn, files)
		exact := make([][]store.Scored, nq)
		var exactT []time.Duration
		for i, q := range qvecs {
			t0 := time.Now()
			if exact[i], err = hn.VectorExact(ctx, q, store.Filter{}, 100); err != nil {
				t.Fatal(err)
			}
			exactT = append(exactT, time.Since(t0))
		}
		hn.Close()
		for _, ef := range []int{40, 100, 200, 400} {
			s, err := postgres.Open(ctx, postgres.Options{DSN: dsn, EfSearch: ef})
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for _, k := range []int{10, 100} {
				hits, total := 0, 0
				var ts []time.Duration
				for i, q := range qvecs {
					t0 := time.Now()
					got, err := s.Vector(ctx, q, store.Filter{}, k)
					if err != nil {
						t.Fatal(err)
					}
					ts = append(ts, time.Since(t0))
					want := map[string]bool{}
					for _, x := range exact[i][:min(k, len(exact[i]))] {
						want[x.ID] = true
					}
					for _, x := range got {
						if want[x.ID] {
							hits++
						}
					}
					total += len(want)
				}
				cells = append(cells, fmt.Sprintf("%.3f", float64(hits)/float64(total)), pct(ts, 50))
			}
			s.Close()
			t.Logf("| %s | %d | %s | %s | %s | %s | %s |", set, ef, cells[0], cells[1], cells[2], cells[3], pct(exactT, 50))
		}
	}
}

// near returns a unit vector about 1/sqrt(1+sigma²) cosine from the unit
// vector c.
func near(rng *rand.Rand, c []float32, sigma float64) []float32 {
	g := storetest.UnitVector(rng, len(c))
	v := make([]float32, len(c))
	var s float64
	for i := range v {
		x := float64(c[i]) + sigma*float64(g[i])
		v[i] = float32(x)
		s += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

// mineAll records the benchmark's model (384-d) in s and applies files,
// returning how long the applies took.
func mineAll(t *testing.T, s store.Store, files []store.FileUpdate) time.Duration {
	t.Helper()
	if err := s.SetModel(t.Context(), "bench", 384); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, u := range files {
		if err := s.Apply(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	return time.Since(start)
}

// synthPalace is the synthetic palace (synthFiles) of as many drawers as
// the environment variable env says (the test skips when it is not set),
// with the generator, seeded with seed, and the word sampler it was made
// with.
func synthPalace(t *testing.T, env string, seed uint64) (n int, rng *rand.Rand, word func() string, files []store.FileUpdate) {
	n, _ = strconv.Atoi(os.Getenv(env))
	if n <= 0 {
		t.Skip(env + " not set")
	}
	rng = rand.New(rand.NewPCG(2026, seed))
	word = storetest.Zipf(rng, storetest.Vocabulary(rng, 30000))
	return n, rng, word, synthFiles(rng, word, n)
}

// synthFiles is n drawers in files of 100: headings of 3-6 and texts of
// 60-100 words drawn by word, random unit 384-d vectors, 50 wings.
func synthFiles(rng *rand.Rand, word func() string, n int) []store.FileUpdate {
	var files []store.FileUpdate
	for i := 0; i < n; i += 100 {
		src := fmt.Sprintf("hive/agents/a%d/f%d.md", i/100%50, i/100)
		wing := fmt.Sprintf("wing%d", i/100%50)
		u := store.FileUpdate{File: store.File{Source: src, Hash: src, Size: 1, MinedAt: time.Now(), Wing: wing, Agent: wing}}
		for j := i; j < min(i+100, n); j++ {
			u.Insert = append(u.Insert, store.Drawer{
				ID: fmt.Sprintf("d%d", j), Wing: wing, Room: "recent", Agent: wing, Source: src,
				Heading: storetest.Words(rng, word, 3, 4), LineStart: j - i + 1, LineEnd: j - i + 1,
				Date: fmt.Sprintf("2026-%02d-%02d", 1+j%12, 1+j%28), Hash: fmt.Sprint(j),
				Text: storetest.Words(rng, word, 60, 41), Vector: storetest.UnitVector(rng, 384),
			})
		}
		files = append(files, u)
	}
	return files
}

// timeEach runs fn for every query and returns "p50 / p95".
func timeEach(t *testing.T, qs []string, fn func(i int) error) string {
	t.Helper()
	ds := make([]time.Duration, len(qs))
	for i := range qs {
		t0 := time.Now()
		if err := fn(i); err != nil {
			t.Fatal(err)
		}
		ds[i] = time.Since(t0)
	}
	return pct(ds, 50) + " / " + pct(ds, 95)
}

func roundMS(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Microsecond)
	}
	return out
}

func pct(ds []time.Duration, p int) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	d := s[min(len(s)-1, len(s)*p/100)]
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

// BenchmarkSessionReads is storetest.BenchSessionReads on PostgreSQL
// (exact vectors; the reads are the same in either vector mode): a
// search's reads of its candidate conversations, one round trip per
// conversation against one for all.
//
//	eval "$(scripts/pg-test.sh start)"
//	go test -run '^$' -bench SessionReads ./internal/store/postgres
func BenchmarkSessionReads(b *testing.B) {
	dsn := pgtest.Schema(b, pgtest.EnvPostgres)
	storetest.BenchSessionReads(b, storetest.MustOpen(b, func() (*postgres.Store, error) { return postgres.Open(b.Context(), postgres.Options{DSN: dsn}) }))
}

// BenchmarkLexicalRareWords is lexical search (k = 10, the whole palace)
// over 20 000 drawers shaped like the Search100k benchmark's (see
// storetest.RareWordsPalace; 150 rare words, each in about 300 drawers): "rare" is
// queries of two or three rare words (every other word is pruned), where
// no word is common enough for the rare-terms tier to pay, "mixed" rare
// words with the middling or common word, where it may. The palace is
// vacuumed and analysed before timing.
//
//	eval "$(scripts/pg-test.sh start)"
//	go test -run '^$' -bench LexicalRareWords ./internal/store/postgres
func BenchmarkLexicalRareWords(b *testing.B) {
	dsn := pgtest.Schema(b, pgtest.EnvPostgres)
	pg := openPG(b, postgres.Options{DSN: dsn})
	rareWordsPalace(b, pg, 40, 500, 150)
	// A settled palace: no autovacuum of the fresh rows while timing.
	pgtest.Exec(b, dsn, `VACUUM ANALYZE drawers`, `VACUUM ANALYZE terms`)
	for _, c := range []struct {
		name    string
		queries []string
	}{
		{"rare", []string{"deploy17 deploy42 handler", "deploy3 deploy88", "deploy5 deploy19 deploy120", "deploy7 deploy140 deploy60", "deploy12 deploy31 deploy9"}},
		{"mixed", []string{"deploy17 common", "deploy3 deploy88 middling", "deploy5 middling common", "deploy7 common handler", "deploy12 deploy31 common"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := pg.Lexical(b.Context(), c.queries[i%len(c.queries)], store.Filter{}, 10); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
