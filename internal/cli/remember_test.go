package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
)

// TestRememberStdinOverLimit: a valid note on stdin over the size limit is
// refused for its size, wherever the reader's cut falls (here inside a
// three-byte character, which used to be reported as invalid UTF-8), and
// nothing reaches the file; a note of exactly the limit is remembered.
func TestRememberStdinOverLimit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	t.Setenv("HIVEMEM_HOME", "")
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--home", root}, args...), strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := run("", "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	euro := "€" // 3 bytes
	limit := app.MaxRememberBytes
	want := fmt.Sprintf("at most %d allowed", limit)
	for name, note := range map[string]string{
		"cut splits a character":             strings.Repeat("x", limit-1) + strings.Repeat(euro, 10),
		"over 1 MiB, cut inside a character": strings.Repeat(euro, (1<<20)/3+1),
		"one byte over":                      strings.Repeat("x", limit+1),
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := run(note, "remember", "alice", "-", "--heading", "big")
			if code == 0 || !strings.Contains(errOut, want) || strings.Contains(errOut, "UTF-8") {
				t.Fatalf("exit %d, stderr %q; want the size-limit error %q", code, errOut, want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "hive", "agents", "alice", "memory.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused note created the memory file (%v)", err)
	}
	note := strings.Repeat("y", limit-len(euro)) + euro
	if code, out, errOut := run(note, "remember", "alice", "-", "--heading", "exactly the limit"); code != 0 || !strings.Contains(out, "remembered") {
		t.Fatalf("a note of exactly %d bytes: exit %d: %s %s", limit, code, out, errOut)
	}
}
