package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgName(t *testing.T) {
	tests := []struct{ argv0, want string }{
		{"/usr/local/bin/mempalace", "mempalace"},
		{"mempalace", "mempalace"},
		{`C:\bin\mempalace.exe`, "mempalace"},
		{"./hivemem", "hivemem"},
		{"/opt/mempalace-old/hivemem", "hivemem"},
	}
	for _, tc := range tests {
		got := progName(filepath.FromSlash(strings.ReplaceAll(tc.argv0, `\`, "/")))
		if got != tc.want {
			t.Errorf("progName(%q) = %q, want %q", tc.argv0, got, tc.want)
		}
	}
}

func TestHomeFromPalacePath(t *testing.T) {
	hd, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	tests := []struct{ in, want string }{
		{"/srv/hm/palace", "/srv/hm"},
		{"/srv/hm/palace/", "/srv/hm"},
		{"/srv/mempalace-data", "/srv/mempalace-data"},
		{"~/.mempalace/palace", filepath.Join(hd, ".mempalace")},
	}
	for _, tc := range tests {
		got, err := homeFromPalacePath(tc.in)
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("homeFromPalacePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckEmbeddingModelNeverRefuses(t *testing.T) {
	openai := t.TempDir()
	cfg := "[embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"nomic-embed-text\"\n"
	if err := os.WriteFile(filepath.Join(openai, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		home, model string
		warnUsing   string // "" = accepted without a warning
	}{
		{t.TempDir(), "", ""},
		{t.TempDir(), "minilm", ""},
		{t.TempDir(), "MiniLM", ""},
		{t.TempDir(), "all-MiniLM-L6-v2", ""},
		{t.TempDir(), "all_minilm_l6_v2", ""},
		{t.TempDir(), "sentence-transformers/all-MiniLM-L6-v2", ""},
		{t.TempDir(), "ALL-MINILM-L6-V2", ""},
		{t.TempDir(), "embeddinggemma", "all-MiniLM-L6-v2"},
		{t.TempDir(), "text-embedding-3-small", "all-MiniLM-L6-v2"},
		{t.TempDir(), "nomic-embed-text", "all-MiniLM-L6-v2"},
		{openai, "nomic-embed-text", ""},
		{openai, "minilm", "nomic-embed-text"},
		{openai, "other-model", "nomic-embed-text"},
	}
	for _, tc := range tests {
		w := checkEmbeddingModel(tc.home, tc.model, "")
		if tc.warnUsing == "" {
			if w != "" {
				t.Errorf("checkEmbeddingModel(%q) warns %q, want no warning", tc.model, w)
			}
			continue
		}
		if !strings.HasPrefix(w, "warning: ") || !strings.Contains(w, tc.model) || !strings.Contains(w, "using the palace's own model, "+tc.warnUsing) || strings.Contains(w, "\n") {
			t.Errorf("checkEmbeddingModel(%q) = %q, want one warning line naming %q and using %s", tc.model, w, tc.model, tc.warnUsing)
		}
	}
}
