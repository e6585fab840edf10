package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
)

// Shape of BenchSessionReads' palace: conversations of a LongMemEval
// haystack's size, a search's window of them.
const (
	benchConversations = 1000
	benchExchanges     = 12
	benchWindow        = 50
	benchDim           = 384
	benchModel         = "bench-model"
)

// BenchSessionReads is the store work of a search that looks at whole
// conversations (the palace's session vectors): the drawers of benchWindow
// conversations of a palace of benchConversations, then their vectors from
// the embedding cache. "per-source" reads each conversation's drawers with
// Drawers, a statement each; "batched" reads them all with DrawersOf;
// "+embeddings" adds the read of their vectors from the embedding cache
// (per-source+embeddings is what sessionVectors did first), and
// "batched+vectors" takes the drawers' own with Vectors instead (the
// backend's in-memory copy, where it keeps one: what it does now). Each
// reports the median and 90th percentile over the same sequence of
// windows.
func BenchSessionReads(b *testing.B, s store.Store) {
	ctx := b.Context()
	rng := rand.New(rand.NewPCG(5, 8))
	word := Zipf(rng, Vocabulary(rng, 20000))
	if err := s.SetModel(ctx, benchModel, benchDim); err != nil {
		b.Fatal(err)
	}
	sources := make([]string, benchConversations)
	for f := range sources {
		src := fmt.Sprintf("hive/agents/bench/sessions/%04d.md", f)
		sources[f] = src
		u := store.FileUpdate{File: store.File{Source: src, Hash: src, Wing: "bench", Agent: "bench"}}
		var hashes []string
		var vecs [][]float32
		for i := range benchExchanges {
			d := store.Drawer{ID: fmt.Sprintf("%d-%d", f, i), Wing: "bench", Room: "session", Agent: "bench", Source: src,
				Heading: "2023-05-01 — exchange", LineStart: 3*i + 1, LineEnd: 3*i + 2, Hash: fmt.Sprintf("h%d-%d", f, i),
				Text: Words(rng, word, 60, 80), Vector: UnitVector(rng, benchDim)}
			u.Insert = append(u.Insert, d)
			hashes, vecs = append(hashes, d.Hash), append(vecs, d.Vector)
		}
		if err := s.Apply(ctx, u); err != nil {
			b.Fatal(err)
		}
		if err := s.PutEmbeddings(ctx, benchModel, hashes, vecs); err != nil {
			b.Fatal(err)
		}
	}
	windows := make([][]string, 64)
	for i := range windows {
		perm := rng.Perm(len(sources))[:benchWindow]
		for _, k := range perm {
			windows[i] = append(windows[i], sources[k])
		}
	}
	perSource := func(window []string) ([]store.Drawer, error) {
		var all []store.Drawer
		for _, src := range window {
			ds, err := s.Drawers(ctx, src)
			if err != nil {
				return nil, err
			}
			all = append(all, ds...)
		}
		return all, nil
	}
	batched := func(window []string) ([]store.Drawer, error) { return s.DrawersOf(ctx, window) }
	type read func(window []string) ([]store.Drawer, error)
	// then is read followed by a read of the drawers' vectors: vectors
	// keyed by key(d), every drawer's there.
	then := func(r read, key func(d store.Drawer) string, vectors func(keys []string) (map[string][]float32, error)) read {
		return func(window []string) ([]store.Drawer, error) {
			ds, err := r(window)
			if err != nil {
				return nil, err
			}
			keys := make([]string, len(ds))
			for i, d := range ds {
				keys[i] = key(d)
			}
			vecs, err := vectors(keys)
			if err != nil {
				return nil, err
			}
			if len(vecs) != len(ds) {
				return nil, fmt.Errorf("%d vectors for %d drawers", len(vecs), len(ds))
			}
			return ds, nil
		}
	}
	cache := func(hashes []string) (map[string][]float32, error) {
		return s.CachedEmbeddings(ctx, benchModel, hashes)
	}
	byHash := func(d store.Drawer) string { return d.Hash }
	byID := func(d store.Drawer) string { return d.ID }
	stored := then(batched, byID, func(ids []string) (map[string][]float32, error) { return s.Vectors(ctx, ids) })
	// The vectors' copy is loaded before the timing.
	if _, err := stored(windows[0]); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read read
	}{
		{"per-source", perSource},
		{"batched", batched},
		{"per-source+embeddings", then(perSource, byHash, cache)},
		{"batched+embeddings", then(batched, byHash, cache)},
		{"batched+vectors", stored},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				ds, err := c.read(windows[i%len(windows)])
				if err != nil {
					b.Fatal(err)
				}
				if len(ds) != benchWindow*benchExchanges {
					b.Fatalf("%d drawers, want %d", len(ds), benchWindow*benchExchanges)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "p90-ms")
		})
	}
}
