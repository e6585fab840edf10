package cli

import (
	"io/fs"
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
		w := checkEmbeddingModel(&globals{home: tc.home}, tc.model, "")
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

// TestMempalaceMineLeavesNoLockFileInTheMinedDir: the drop-in mines agent
// directories a harness names by path, outside the home; mining takes the
// palace's lock only, so those directories get no lock file.
func TestMempalaceMineLeavesNoLockFileInTheMinedDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HIVEMEM_HOME", "")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(dir, "no-model"))
	t.Setenv("HIVEMEM_EMBEDDER_AUTO_FETCH", "false")
	t.Setenv("MEMPALACE_PALACE_PATH", filepath.Join(dir, "mp", "palace"))
	project := filepath.Join(dir, "project")
	agent := filepath.Join(project, "hive", "agents", "bob")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	note := "# Memory — bob\n\n## 2026-11-20 — release\nThe release branch is cut on Fridays.\n"
	if err := os.WriteFile(filepath.Join(agent, "memory.md"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, out, errOut := mempalace(t, "mine", agent, "--wing", "bob", "--agent", "bob"); code != 0 {
			t.Fatalf("mine = %d\nstdout %s\nstderr %s", code, out, errOut)
		}
	}
	err := filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("lock file in the mined directory: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
