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

func TestCheckEmbeddingModel(t *testing.T) {
	openai := t.TempDir()
	cfg := "[embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"nomic-embed-text\"\n"
	if err := os.WriteFile(filepath.Join(openai, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		home, model string
		ok          bool
	}{
		{t.TempDir(), "", true},
		{t.TempDir(), "all-MiniLM-L6-v2", true},
		{t.TempDir(), "sentence-transformers/all-MiniLM-L6-v2", true},
		{t.TempDir(), "ALL-MINILM-L6-V2", true},
		{t.TempDir(), "text-embedding-3-small", false},
		{t.TempDir(), "nomic-embed-text", false},
		{openai, "nomic-embed-text", true},
		{openai, "other-model", false},
	}
	for _, tc := range tests {
		err := checkEmbeddingModel(tc.home, tc.model)
		if (err == nil) != tc.ok {
			t.Errorf("checkEmbeddingModel(%q) = %v, want ok=%v", tc.model, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L6-v2") {
			t.Errorf("error %q does not list the supported models", err)
		}
	}
}
