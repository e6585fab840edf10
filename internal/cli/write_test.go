package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
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
	limit := palace.MaxRememberBytes
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

// TestRememberPinMineFails: with a model that does not load, remember and
// pin write the note and the fact, warn on stderr that they are not
// searchable yet, and exit 0, so nobody runs them again.
func TestRememberPinMineFails(t *testing.T) {
	root, model := filepath.Join(t.TempDir(), "home"), t.TempDir()
	for _, f := range []string{"model.fp16.safetensors", "tokenizer.json", "config.json"} {
		if err := os.WriteFile(filepath.Join(model, f), []byte("not a model"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HIVEMEM_MODEL_DIR", model)
	t.Setenv("HIVEMEM_HOME", "")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--home", root}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := run("init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	note := "the build cache lives on the second disk"
	code, out, errOut := run("remember", "alice", note, "--heading", "cache")
	if code != 0 || !strings.Contains(out, "remembered") || !strings.Contains(errOut, "warning: the note is saved") || !strings.Contains(errOut, "model") {
		t.Fatalf("remember: exit %d, stdout %q, stderr %q; want exit 0 and a warning naming the model", code, out, errOut)
	}
	code, out, errOut = run("pin", "alice", "Releases ship on Tuesdays", "--json")
	if code != 0 || !strings.Contains(out, `"added": true`) || !strings.Contains(out, `"mine_error"`) || !strings.Contains(errOut, "warning: the fact is saved") {
		t.Fatalf("pin: exit %d, stdout %q, stderr %q; want exit 0, mine_error and a warning", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(root, "hive", "agents", "alice", "memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), note) != 1 || strings.Count(string(data), "- Releases ship on Tuesdays\n") != 1 {
		t.Fatalf("note or fact not written exactly once:\n%s", data)
	}
}
