package palace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/home"
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
// text, random 384-d vectors) in each mode, scoped to the whole palace and
// to one of 50 wings.
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
		u := store.FileUpdate{File: store.File{Source: src, Hash: fmt.Sprint(f), Wing: wing, Agent: wing}}
		for i := 0; i < 1000; i++ {
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
				ID: fmt.Sprintf("%d-%d", f, i), Wing: wing, Room: "recent", Agent: wing, Source: src,
				Heading: "note", LineStart: i*3 + 1, LineEnd: i*3 + 2, Hash: fmt.Sprintf("h%d-%d", f, i),
				Text: text, Vector: storetest.UnitVector(rng, dim),
			})
		}
		if err := st.Apply(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
	queries := []string{"deploy17 timeout42 handler", "database3 migration88", "login5 cookie19 expiry", "queue7 latency140 review", "billing12 upload31 cache9"}
	for _, mode := range []string{palace.ModeLexical, palace.ModeVector, palace.ModeHybrid} {
		for _, scope := range []string{"all", "wing"} {
			b.Run(mode+"/"+scope, func(b *testing.B) {
				f := store.Filter{}
				if scope == "wing" {
					f.Wing = "agent07"
				}
				// Warm the in-memory vector copy outside the timing.
				if _, err := p.Search(ctx, palace.Query{Text: queries[0], Mode: mode, Filter: f}); err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, 0, b.N)
				i := 0
				for b.Loop() {
					t0 := time.Now()
					if _, err := p.Search(ctx, palace.Query{Text: queries[i%len(queries)], Mode: mode, Results: 10, Filter: f}); err != nil {
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
