package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
)

// requireModel skips without the MiniLM model, except in CI, which
// installs it (make test runs `hivemem model fetch` first).
func requireModel(t testing.TB) {
	t.Helper()
	if ModelInstalled(modelfetch.DefaultDir()) {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("MiniLM model not installed in %s (CI must run `hivemem model fetch`)", modelfetch.DefaultDir())
	}
	t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", modelfetch.DefaultDir())
}

// openAt opens (creating it) the home at root with the embedder the
// environment configures; it is closed when the test ends.
func openAt(t testing.TB, root string) *App {
	t.Helper()
	a, err := Open(context.Background(), Options{Home: root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestParaphraseFindsSection is the end-to-end check that mining and
// searching use real MiniLM vectors: a query sharing no word with its
// target section finds it, where BM25 alone cannot.
func TestParaphraseFindsSection(t *testing.T) {
	requireModel(t)
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	ctx := context.Background()
	a := openAt(t, t.TempDir())
	if a.Embedder.Provider != "minilm" || a.Palace.Mode() != palace.ModeHybrid {
		t.Fatalf("embedder %+v, mode %s: want MiniLM and hybrid search", a.Embedder, a.Palace.Mode())
	}
	memory := "# Memory — Pat (pat)\n\n" +
		"## 2026-11-01 — garden\nPlanted tomatoes and basil in the raised beds behind the house.\n\n" +
		"## 2026-11-02 — car\nThe mechanic replaced the brake pads and rotated the tyres.\n\n" +
		"## 2026-11-03 — money\nPaid the electricity bill and moved savings into an index fund.\n"
	hometest.WriteMemory(t, a.Home, "pat", memory)
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

// TestOpenAIEmbedderWiring: with embedder.provider = openai the palace
// embeds through any /v1/embeddings endpoint, learns its dimension at open,
// and an unreachable endpoint is a clear error, not a lexical fallback.
func TestOpenAIEmbedderWiring(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "toy" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, s := range req.Input {
			v := make([]float32, 8)
			for _, c := range strings.ToLower(s) {
				v[int(c)%8]++
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "openai")
	t.Setenv("HIVEMEM_EMBEDDER_BASE_URL", srv.URL)
	t.Setenv("HIVEMEM_EMBEDDER_MODEL", "toy")
	ctx := context.Background()
	a := openAt(t, t.TempDir())
	if a.Embedder.Provider != "openai" || a.Embedder.Dim != 8 || a.Palace.Mode() != palace.ModeHybrid {
		t.Fatalf("embedder %+v, mode %s", a.Embedder, a.Palace.Mode())
	}
	if _, err := a.Remember(ctx, RememberRequest{Agent: "ann", Heading: "note", Text: "vectors from a remote endpoint"}); err != nil {
		t.Fatal(err)
	}
	hits, err := a.Palace.Search(ctx, palace.Query{Text: "remote vectors", Mode: palace.ModeVector})
	if err != nil || len(hits) != 1 {
		t.Fatalf("vector search: %v, %v", hits, err)
	}
	if calls.Load() < 3 {
		t.Fatalf("endpoint called %d times, want probe + mine + query", calls.Load())
	}
	srv.Close()
	if _, err := Open(ctx, Options{Home: t.TempDir(), Create: true}); err == nil || !strings.Contains(err.Error(), "embedder") {
		t.Fatalf("unreachable endpoint: err = %v, want a clear embedder error", err)
	}
}

// TestOpenRefusesUnusableHome: a home whose hive/agents is a file, or whose
// palace directory is a file, is refused with an error naming the path,
// not a panic.
func TestOpenRefusesUnusableHome(t *testing.T) {
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	for name, setup := range map[string]func(root string) error{
		"agents-is-file": func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "hive"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "hive", "agents"), []byte("x"), 0o644)
		},
		"palace-is-file": func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "hive", "agents"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "palace"), []byte("x"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "home")
			if err := setup(root); err != nil {
				t.Fatal(err)
			}
			a, err := Open(context.Background(), Options{Home: root, Create: true})
			if err == nil {
				a.Close()
				t.Fatal("opened an unusable home")
			}
			if !strings.Contains(err.Error(), root) {
				t.Errorf("error does not name the path: %v", err)
			}
		})
	}
}
