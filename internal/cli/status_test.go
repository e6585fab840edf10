package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
)

// TestStatusCountsDrawersStillToEmbed: a note remembered before the model
// was installed has no vector; with the model, status says so beside
// "hybrid" (and what embeds it), and says nothing once a mine has.
func TestStatusCountsDrawersStillToEmbed(t *testing.T) {
	model := modelfetch.DefaultDir()
	if info, err := modelfetch.Status(model); err != nil || !info.Verified {
		t.Skip("needs the fetched MiniLM model (hivemem model fetch):", model)
	}
	root := filepath.Join(t.TempDir(), "home")
	t.Setenv("HIVEMEM_HOME", "")
	t.Setenv("HIVEMEM_EMBEDDER_AUTO_FETCH", "false")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), append([]string{"--home", root}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	run("init")
	run("remember", "alice", "the customer wants invoices in euros", "--heading", "billing")
	const line = "vectors:  1 drawer of 1 still to embed"
	if out := run("status"); strings.Contains(out, line) {
		t.Errorf("lexical-only status counts drawers to embed:\n%s", out)
	}
	t.Setenv("HIVEMEM_MODEL_DIR", model)
	out := run("status")
	if !strings.Contains(out, "search:   hybrid") || !strings.Contains(out, line) || !strings.Contains(out, "the next `hivemem mine` or `hivemem run` embeds it") {
		t.Errorf("status with the model, before a mine, does not count the drawer to embed:\n%s", out)
	}
	run("mine")
	if out := run("status"); strings.Contains(out, "still to embed") || !strings.Contains(out, "1 drawer, 1 vector") {
		t.Errorf("status after the mine:\n%s", out)
	}
}
