package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
)

// requireModel skips without the MiniLM model, except in CI, which
// installs it (make test runs `hivemem model fetch` first).
func requireModel(t *testing.T) {
	t.Helper()
	if ModelInstalled(modelfetch.DefaultDir()) {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("MiniLM model not installed in %s (CI must run `hivemem model fetch`)", modelfetch.DefaultDir())
	}
	t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", modelfetch.DefaultDir())
}

// TestParaphraseFindsSection is the end-to-end check that mining and
// searching use real MiniLM vectors: a query sharing no word with its
// target section finds it, where BM25 alone cannot.
func TestParaphraseFindsSection(t *testing.T) {
	requireModel(t)
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	ctx := context.Background()
	a, err := Open(ctx, Options{Home: t.TempDir(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Embedder.Provider != "minilm" || a.Palace.Mode() != palace.ModeHybrid {
		t.Fatalf("embedder %+v, mode %s: want MiniLM and hybrid search", a.Embedder, a.Palace.Mode())
	}
	dir := filepath.Join(a.Home.AgentsDir(), "pat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	memory := "# Memory — Pat (pat)\n\n" +
		"## 2026-11-01 — garden\nPlanted tomatoes and basil in the raised beds behind the house.\n\n" +
		"## 2026-11-02 — car\nThe mechanic replaced the brake pads and rotated the tyres.\n\n" +
		"## 2026-11-03 — money\nPaid the electricity bill and moved savings into an index fund.\n"
	if err := os.WriteFile(filepath.Join(dir, "memory.md"), []byte(memory), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := a.Palace.Mine(ctx, a.Home.AgentsDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedded != 3 {
		t.Fatalf("mine embedded %d drawers, want 3", rep.Embedded)
	}
	const q = "automobile repair shop visit"
	lex, err := a.Palace.Search(ctx, palace.Query{Text: q, Mode: palace.ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	if len(lex) != 0 {
		t.Fatalf("the query shares a word with the hive after all: lexical hits %+v", lex)
	}
	for _, mode := range []string{palace.ModeVector, palace.ModeHybrid} {
		hits, err := a.Palace.Search(ctx, palace.Query{Text: q, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Heading != "2026-11-02 — car" {
			t.Fatalf("%s search for %q: top hit %+v, want the car section", mode, q, hits)
		}
	}
}
