package palace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/minilm"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// BenchmarkRemineUnchanged128K is the cost of mining a 128 KiB file that
// has not changed since the last mine: one read and one hash.
func BenchmarkRemineUnchanged128K(b *testing.B) {
	f := newFixture(b, nil)
	content, _ := bigFile(128 << 10)
	path := f.write("big", content)
	ctx := context.Background()
	if _, err := f.p.Mine(ctx, path, palace.MineOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := f.p.Mine(ctx, path, palace.MineOptions{})
		if err != nil || rep.Unchanged != 1 {
			b.Fatal(rep, err)
		}
	}
}

// fixedEmbedder returns one fixed unit vector for every text: search
// benchmarks measure the palace, not the model.
type fixedEmbedder struct{ v []float32 }

func (e fixedEmbedder) Dim() int        { return len(e.v) }
func (e fixedEmbedder) ModelID() string { return "bench-fixed-384" }
func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = e.v
	}
	return out, nil
}

// BenchmarkSearch100k is search over a 100 000-drawer palace (synthetic
// text, random 384-d vectors) in each mode, over the whole palace and
// scoped to few drawers (one of 50 wings, 2 %), a tenth (the room one
// drawer in ten is in), half (one of two agents) and most (the room nine
// drawers in ten are in); over the whole palace for queries that name a
// time ("two weeks ago": a window of nine days, about 2 500 drawers, from
// which each ranker fetches candidates too); and with date bounds holding
// most (since, 91 %) and few (since and until, 5 %) of the drawers, alone
// and in that room.
func BenchmarkSearch100k(b *testing.B) {
	const n, dim, wings = 100_000, 384, 50
	rng := rand.New(rand.NewPCG(1, 2))
	dir := b.TempDir()
	h := home.Home{Root: dir}
	if err := h.Init(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "palace.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	emb := fixedEmbedder{v: storetest.UnitVector(rng, dim)}
	p, err := palace.New(ctx, h, st, emb, palace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	topics := []string{"deploy", "database", "migration", "login", "cookie", "queue", "latency", "index", "billing", "upload", "review", "release", "pilot", "budget", "cache", "timeout"}
	filler := []string{"the", "a", "we", "then", "after", "before", "fixed", "found", "checked", "service", "handler", "test", "config", "error", "value", "team", "week", "run", "file", "path"}
	for f := 0; f < n/1000; f++ {
		wing := fmt.Sprintf("agent%02d", f%wings)
		src := fmt.Sprintf("hive/agents/%s/memory-%d.md", wing, f)
		agent := []string{"ada", "bob"}[f%2]
		u := store.FileUpdate{File: store.File{Source: src, Hash: fmt.Sprint(f), Wing: wing, Agent: agent}}
		for i := 0; i < 1000; i++ {
			room := "recent"
			if i%10 == 0 {
				room = "archive"
			}
			words := make([]string, 60+rng.IntN(40))
			for j := range words {
				if rng.IntN(8) == 0 {
					words[j] = topics[rng.IntN(len(topics))] + fmt.Sprint(rng.IntN(200))
				} else {
					words[j] = filler[rng.IntN(len(filler))]
				}
			}
			text := strings.Join(words, " ")
			u.Insert = append(u.Insert, store.Drawer{
				ID: fmt.Sprintf("%d-%d", f, i), Wing: wing, Room: room, Agent: agent, Source: src,
				Heading: "note", LineStart: i*3 + 1, LineEnd: i*3 + 2, Hash: fmt.Sprintf("h%d-%d", f, i),
				Date: fmt.Sprintf("2025-%02d-%02d", 1+f%12, 1+i%28),
				Text: text, Vector: storetest.UnitVector(rng, dim),
			})
		}
		if err := st.Apply(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
	queries := []string{"deploy17 timeout42 handler", "database3 migration88", "login5 cookie19 expiry", "queue7 latency140 review", "billing12 upload31 cache9"}
	for _, mode := range []string{palace.ModeLexical, palace.ModeVector, palace.ModeHybrid} {
		for _, scope := range []string{"all", "wing", "tenth", "agent", "room", "dated", "since90", "window5", "since90+room", "window5+room"} {
			b.Run(mode+"/"+scope, func(b *testing.B) {
				f := store.Filter{}
				switch scope {
				case "wing": // few: 2 %
					f.Wing = "agent07"
				case "tenth":
					f.Room = "archive"
				case "agent": // half
					f.Agent = "ada"
				case "room": // most: 90 %
					f.Room = "recent"
				case "since90", "since90+room": // all months but January's 9 files of 100
					f.Since = "2025-02-01"
				case "window5", "window5+room": // days 1-17 of May's 8 files of 100
					f.Since, f.Until = "2025-05-01", "2025-05-17"
				}
				if strings.HasSuffix(scope, "+room") {
					f.Room = "recent"
				}
				text, asOf := func(i int) string { return queries[i%len(queries)] }, ""
				if scope == "dated" {
					text, asOf = func(i int) string { return queries[i%len(queries)] + " two weeks ago" }, "2025-06-15"
				}
				// Warm the in-memory vector copy outside the timing.
				if _, err := p.Search(ctx, palace.Query{Text: text(0), Mode: mode, Filter: f, AsOf: asOf}); err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, 0, b.N)
				i := 0
				for b.Loop() {
					t0 := time.Now()
					if _, err := p.Search(ctx, palace.Query{Text: text(i), Mode: mode, Results: 10, Filter: f, AsOf: asOf}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					i++
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			})
		}
	}
}

// benchModel is the installed MiniLM, loaded once for the test binary.
var benchModel = sync.OnceValues(func() (*minilm.Model, error) { return minilm.Load(modelfetch.DefaultDir()) })

// sessionFiles builds n conversation-like memory files of a few dated
// sections each, every line distinct (no embedding cache hits): the shape
// an import gives, one file per session.
func sessionFiles(rng *rand.Rand, n int) []string {
	words := strings.Fields("we talked about the trip to Lisbon next spring and whether my sister can come along " +
		"I started a new job at the hospital last month and the night shifts are hard on my sleep " +
		"can you recommend a recipe for dinner that uses the basil from my garden and some leftover rice " +
		"my old laptop keeps overheating when I edit photos so I am thinking about buying a new one " +
		"the cat has been hiding under the bed since we moved to the new apartment near the river " +
		"I ran my first half marathon in two hours and ten minutes and want to beat it in autumn")
	out := make([]string, n)
	for f := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "# Memory — Bench (bench)\n\n")
		for s := range 2 + rng.IntN(3) {
			fmt.Fprintf(&b, "## 2023-%02d-%02d — session %d-%d\n", 1+rng.IntN(12), 1+rng.IntN(28), f, s)
			for range 2 + rng.IntN(4) {
				line := make([]string, 20+rng.IntN(40))
				for j := range line {
					line[j] = words[rng.IntN(len(words))]
				}
				b.WriteString(strings.Join(line, " ") + ".\n")
			}
			b.WriteString("\n")
		}
		out[f] = b.String()
	}
	return out
}

// BenchmarkMineThroughput mines 24 session files (half a LongMemEval haystack
// worth) into a fresh palace with the installed MiniLM, then embeds the
// same drawer texts with the model alone in batches of 32, in the same
// iteration: mine-tok/s against embedder-tok/s under the same load, and
// their ratio (mine/embedder, the median over iterations). Files, text and
// batch are the shape of an import's sessions and of bench longmemeval's
// embedder-alone timing.
func BenchmarkMineThroughput(b *testing.B) {
	m, err := benchModel()
	if err != nil {
		b.Skipf("MiniLM not installed in %s: %v", modelfetch.DefaultDir(), err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	var mineTPS, embTPS, ratios []float64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		h := home.Home{Root: dir}
		if err := h.Init(); err != nil {
			b.Fatal(err)
		}
		agentDir := filepath.Join(h.AgentsDir(), "bench")
		if err := os.MkdirAll(agentDir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i, content := range sessionFiles(rng, 24) {
			if err := os.WriteFile(filepath.Join(agentDir, fmt.Sprintf("s%02d.md", i)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
		if err != nil {
			b.Fatal(err)
		}
		p, err := palace.New(ctx, h, st, m, palace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		rep, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{})
		mineSecs := time.Since(t0).Seconds()
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		ds, err := st.List(ctx, store.Filter{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Embedded != len(ds) || len(ds) == 0 {
			b.Fatalf("mine embedded %d texts for %d drawers", rep.Embedded, len(ds))
		}
		texts := make([]string, len(ds))
		tokens := 0
		for i, d := range ds {
			texts[i] = chunk.Chunk{Heading: d.Heading, Text: d.Text}.EmbedText()
			tokens += chunk.EstimateTokens(texts[i])
		}
		t0 = time.Now()
		for i := 0; i < len(texts); i += 32 {
			if _, err := m.Embed(ctx, texts[i:min(i+32, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		embSecs := time.Since(t0).Seconds()
		st.Close()
		mineTPS = append(mineTPS, float64(tokens)/mineSecs)
		embTPS = append(embTPS, float64(tokens)/embSecs)
		ratios = append(ratios, embSecs/mineSecs)
		b.StartTimer()
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(mineTPS), "mine-tok/s")
	b.ReportMetric(med(embTPS), "embedder-tok/s")
	b.ReportMetric(med(ratios), "mine/embedder")
}
