package cli

// Edge cases through the command runner (Main): arguments a shell
// script cannot easily write (invalid UTF-8, 100 KB), stdin edge cases and
// several commands writing one home at once.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// edgeHome is an initialised lexical-only home with one agent.
func edgeHome(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "home")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("HIVEMEM_HOME", "")
	if code, _, errOut := edgeRun(t, "", "--home", root, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if code, _, errOut := edgeRun(t, "", "--home", root, "remember", "alice", "the session cookie expiry skew made the login test flaky", "--heading", "flaky login"); code != 0 {
		t.Fatalf("remember: %s", errOut)
	}
	return root
}

func edgeRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestBadArgumentsNameTheProblem: arguments with invalid UTF-8, NUL bytes and huge
// sizes fail with a message naming the problem.
func TestBadArgumentsNameTheProblem(t *testing.T) {
	root := edgeHome(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"query invalid utf8", []string{"search", "caf\xe9"}, "not valid UTF-8"},
		{"query 100 KB", []string{"search", strings.Repeat("a", 100<<10)}, "at most 4096 allowed"},
		{"query NUL only", []string{"search", "\x00\x00"}, "empty query"},
		{"remember invalid utf8", []string{"remember", "alice", "note \xff"}, "not valid UTF-8"},
		{"remember NUL", []string{"remember", "alice", "a\x00b"}, "NUL"},
		{"remember 70 KB", []string{"remember", "alice", strings.Repeat("x", 70<<10)}, "at most 65536 allowed"},
		{"heading invalid utf8", []string{"remember", "alice", "x", "--heading", "h\xff"}, "heading"},
		{"heading newline", []string{"remember", "alice", "x", "--heading", "a\nb"}, "one line"},
		{"pin invalid utf8", []string{"pin", "alice", "fact \xfe"}, "not valid UTF-8"},
		{"pin NUL", []string{"pin", "alice", "a\x00"}, "NUL"},
		{"agent NUL", []string{"remember", "a\x00b", "x"}, "NUL"},
		{"agent invalid utf8", []string{"remember", "\xff", "x"}, "invalid agent id"},
		{"mine wing NUL", []string{"mine", "--wing", "a\x00"}, "--wing"},
		{"mine room newline", []string{"mine", "--room", "a\nb"}, "--room"},
		{"mine wing long", []string{"mine", "--wing", strings.Repeat("w", 129)}, "--wing"},
		{"wake-up wing invalid utf8", []string{"wake-up", "--wing", "\xff"}, "wing is not valid UTF-8"},
		{"restore bad name", []string{"restore", "alice", "20261129T135100Z/../x"}, "not valid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := edgeRun(t, "", append([]string{"--home", root}, c.args...)...)
			if code == 0 {
				t.Fatalf("exit 0, want a failure naming %q", c.want)
			}
			if !strings.Contains(errOut, c.want) {
				t.Fatalf("stderr %q does not contain %q", errOut, c.want)
			}
		})
	}
	// Nothing refused reached the file.
	data, err := os.ReadFile(filepath.Join(root, "hive", "agents", "alice", "memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte{0xff}) || bytes.Contains(data, []byte{0}) || bytes.Count(data, []byte("\n## ")) != 4 {
		t.Fatalf("memory file changed by a refused command:\n%s", data)
	}
}

// TestRememberReadsNoteFromStdin: `remember <agent> -` reads the note from stdin,
// with the same limits as an argument.
func TestRememberReadsNoteFromStdin(t *testing.T) {
	root := edgeHome(t)
	for _, c := range []struct {
		name, stdin, want string
	}{
		{"empty", "", "text is empty"},
		{"blank", "\n\n \t\n", "text is empty"},
		{"invalid utf8", "caf\xe9\n", "not valid UTF-8"},
		{"NUL", "a\x00b", "NUL"},
		{"over the limit", strings.Repeat("x", 70<<10), "at most 65536 allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := edgeRun(t, c.stdin, "--home", root, "remember", "alice", "-")
			if code == 0 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q; want a failure naming %q", code, errOut, c.want)
			}
		})
	}
	code, out, errOut := edgeRun(t, "## Recent\n```\nfenced note from stdin", "--home", root, "remember", "alice", "-", "--heading", "from stdin")
	if code != 0 || !strings.Contains(out, "remembered") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	code, out, _ = edgeRun(t, "", "--home", root, "search", "--json", "fenced note stdin")
	if code != 0 || !strings.Contains(out, `"heading": "`) || !strings.Contains(out, "from stdin") {
		t.Fatalf("note from stdin not searchable: %s", out)
	}
}

// TestConcurrentCommandsLandEveryNoteOnce: several remember, pin and search commands on
// one home at once (as agents in parallel do): all succeed, every note and
// fact lands once, and the index holds them all.
func TestConcurrentCommandsLandEveryNoteOnce(t *testing.T) {
	root := edgeHome(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan string, 3*n)
	for i := 0; i < n; i++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			if code, _, e := edgeRun(t, "", "--home", root, "remember", "alice", fmt.Sprintf("parallel note number %d", i), "--heading", fmt.Sprintf("parallel %d", i)); code != 0 {
				errs <- fmt.Sprintf("remember %d: %s", i, e)
			}
		}()
		go func() {
			defer wg.Done()
			if code, _, e := edgeRun(t, "", "--home", root, "pin", "alice", fmt.Sprintf("parallel fact %d", i)); code != 0 {
				errs <- fmt.Sprintf("pin %d: %s", i, e)
			}
		}()
		go func() {
			defer wg.Done()
			if code, _, e := edgeRun(t, "", "--home", root, "search", "--json", "parallel note"); code != 0 {
				errs <- fmt.Sprintf("search %d: %s", i, e)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	data, _ := os.ReadFile(filepath.Join(root, "hive", "agents", "alice", "memory.md"))
	for i := 0; i < n; i++ {
		if c := strings.Count(string(data), fmt.Sprintf("parallel note number %d\n", i)); c != 1 {
			t.Errorf("note %d: %d copies", i, c)
		}
		if c := strings.Count(string(data), fmt.Sprintf("- parallel fact %d\n", i)); c != 1 {
			t.Errorf("fact %d: %d copies", i, c)
		}
	}
	code, out, _ := edgeRun(t, "", "--home", root, "search", "--json", "--results", "50", "parallel note number")
	if code != 0 || strings.Count(out, `"heading": "`) < n {
		t.Errorf("index lacks the parallel notes: %s", out)
	}
	// The index agrees with the files: a rebuild finds the same drawers.
	code, before, _ := edgeRun(t, "", "--home", root, "status", "--json")
	if code != 0 {
		t.Fatal("status failed")
	}
	if code, _, e := edgeRun(t, "", "--home", root, "reindex"); code != 0 {
		t.Fatalf("reindex: %s", e)
	}
	_, after, _ := edgeRun(t, "", "--home", root, "status", "--json")
	if edgeDrawers(before) != edgeDrawers(after) {
		t.Errorf("drawers before reindex %s, after %s", edgeDrawers(before), edgeDrawers(after))
	}
}

// edgeDrawers picks the index's drawer count out of `status --json`.
func edgeDrawers(statusJSON string) string {
	i := strings.Index(statusJSON, `"drawers": `)
	if i < 0 {
		return "?"
	}
	s := statusJSON[i+len(`"drawers": `):]
	return s[:strings.IndexAny(s, ",\n")]
}
