package wiring_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/wiring"
)

// writeConfig creates the home at root with cfg as its config.toml.
func writeConfig(t *testing.T, root, cfg string) {
	t.Helper()
	if _, _, err := wiring.LoadHome(root, true); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// status opens the home at root and returns its status; the app is
// closed when the test ends.
func status(t *testing.T, root string) app.Status {
	t.Helper()
	a, err := wiring.Open(t.Context(), wiring.Options{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	st, err := a.Status(t.Context(), app.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestEmbedderIsChosenByConfig: each provider gives the embedder it
// names, lexical-only with a note saying why, or an error naming the
// embedder when it cannot be built; "auto" without the model is
// lexical-only, "minilm" without it an error.
func TestEmbedderIsChosenByConfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-model")
	tests := []struct {
		name     string
		cfg      config.Embedder
		provider string // of the info, when it builds
		note     string // in the info's note
		wantErr  string // "": builds
	}{
		{name: "none", cfg: config.Embedder{Provider: "none"}, provider: "none", note: "embedder.provider = none"},
		{name: "auto without the model", cfg: config.Embedder{Provider: "auto", ModelDir: missing}, provider: "none", note: "hivemem model fetch"},
		{name: "minilm without the model", cfg: config.Embedder{Provider: "minilm", ModelDir: missing}, wantErr: "embedder: MiniLM model not installed"},
		{name: "openai without a model", cfg: config.Embedder{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1"}, wantErr: "embedder:"},
		{name: "openai unreachable", cfg: config.Embedder{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, wantErr: "embedder:"},
		{name: "unknown provider", cfg: config.Embedder{Provider: "telepathy"}, wantErr: `unknown provider "telepathy"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Embedder = tt.cfg
			emb, info, err := wiring.NewEmbedder(t.Context(), cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if emb != nil || info.Provider != tt.provider || !strings.Contains(info.Note, tt.note) {
				t.Fatalf("embedder %v, info %+v: want none, provider %s, a note saying %q", emb, info, tt.provider, tt.note)
			}
		})
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
	ctx := t.Context()
	root := t.TempDir()
	a, err := wiring.Open(ctx, wiring.Options{Home: root, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.Status(ctx, app.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedder.Provider != "openai" || st.Embedder.Dim != 8 || st.Search != palace.ModeHybrid {
		t.Fatalf("embedder %+v, mode %s", st.Embedder, st.Search)
	}
	if _, err := a.Remember(ctx, app.RememberRequest{Agent: "ann", Heading: "note", Text: "vectors from a remote endpoint"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Search(ctx, app.SearchRequest{Query: "remote vectors", Mode: palace.ModeVector})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("vector search: %+v, %v", res, err)
	}
	if calls.Load() < 3 {
		t.Fatalf("endpoint called %d times, want probe + mine + query", calls.Load())
	}
	srv.Close()
	if _, err := wiring.Open(ctx, wiring.Options{Home: t.TempDir(), Create: true}); err == nil || !strings.Contains(err.Error(), "embedder") {
		t.Fatalf("unreachable endpoint: err = %v, want a clear embedder error", err)
	}
}

// TestStoreIsChosenByConfig: palace.backend picks the store; SQLite keeps
// its index in the home's palace directory.
func TestStoreIsChosenByConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     func(t *testing.T) string
		backend string
	}{
		{"sqlite", func(*testing.T) string { return "[embedder]\nprovider = \"none\"\n" }, "sqlite"},
		{"postgres", func(t *testing.T) string {
			return "[embedder]\nprovider = \"none\"\n[palace]\nbackend = \"postgres\"\ndsn = \"" + pgtest.Schema(t, pgtest.EnvPostgres) + "\"\n"
		}, "postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeConfig(t, root, tt.cfg(t))
			st := status(t, root)
			_, err := os.Stat(filepath.Join(root, "palace", "palace.db"))
			if st.Backend != tt.backend || (err == nil) != (tt.backend == "sqlite") {
				t.Fatalf("backend %q (palace.db in the home: %v), want %q", st.Backend, err == nil, tt.backend)
			}
		})
	}
}

// TestOpenStoreRefusesAnUnknownBackend: a backend this build lacks is a
// clear error (config.Load refuses it first; OpenStore does too).
func TestOpenStoreRefusesAnUnknownBackend(t *testing.T) {
	cfg := config.Default()
	cfg.Palace.Backend = "oracle"
	h, _, err := wiring.LoadHome(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wiring.OpenStore(t.Context(), h, cfg); err == nil || !strings.Contains(err.Error(), `backend "oracle" is not available`) {
		t.Fatalf("err = %v, want the backend named", err)
	}
}

// TestOpenLoadedUsesTheConfigItIsGiven: the app is built from the config
// the caller loaded, not from config.toml read a second time.
func TestOpenLoadedUsesTheConfigItIsGiven(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "[embedder]\nprovider = \"none\"\n")
	h, cfg, err := wiring.LoadHome(root, false)
	if err != nil {
		t.Fatal(err)
	}
	// Read again, this config would fail the open (an unreachable endpoint).
	writeConfig(t, root, "[embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n")
	a, err := wiring.OpenLoaded(t.Context(), h, cfg, wiring.Options{})
	if err != nil {
		t.Fatalf("open over the loaded config: %v", err)
	}
	defer a.Close()
	if st, err := a.Status(t.Context(), app.StatusRequest{}); err != nil || st.Embedder.Provider != "none" {
		t.Fatalf("status %+v, %v: want the loaded config's embedder (none)", st.Embedder, err)
	}
}

// TestLoadHomeCreatesOnlyWhenAsked: a home that does not exist is
// app.ErrNoHome unless create, which makes it.
func TestLoadHomeCreatesOnlyWhenAsked(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	if _, _, err := wiring.LoadHome(root, false); !errors.Is(err, app.ErrNoHome) {
		t.Fatalf("missing home: err = %v, want ErrNoHome", err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused home was made: %v", err)
	}
	h, cfg, err := wiring.LoadHome(root, true)
	if err != nil || !h.Exists() || cfg.Palace.Backend != "sqlite" {
		t.Fatalf("created home exists %v, backend %q, err %v", h.Exists(), cfg.Palace.Backend, err)
	}
}

// TestIndexLaterSavesTheNoteWhenTheIndexCannotOpen: an app opened with
// IndexLater writes a note even though its index cannot be opened; the
// failure is the write's mine error.
func TestIndexLaterSavesTheNoteWhenTheIndexCannotOpen(t *testing.T) {
	root := t.TempDir()
	writeConfig(t, root, "[embedder]\nprovider = \"none\"\n")
	// A directory where the index file goes: the index cannot be opened.
	if err := os.MkdirAll(filepath.Join(root, "palace", "palace.db", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := wiring.Open(t.Context(), wiring.Options{Home: root}); err == nil {
		t.Fatal("opened an index that is a directory")
	}
	a, err := wiring.Open(t.Context(), wiring.Options{Home: root, IndexLater: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Remember(t.Context(), app.RememberRequest{Agent: "alice", Text: "kept whatever the index does"})
	if err != nil || res.MineError == "" {
		t.Fatalf("remember = %+v, %v; want the note saved and the index's failure in mine_error", res, err)
	}
	data, err := os.ReadFile(filepath.Join(root, "hive", "agents", "alice", "memory.md"))
	if err != nil || !strings.Contains(string(data), "kept whatever the index does") {
		t.Fatalf("note not saved: %v\n%s", err, data)
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
			a, err := wiring.Open(context.Background(), wiring.Options{Home: root, Create: true})
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
