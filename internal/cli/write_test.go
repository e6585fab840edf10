package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
)

// TestRememberPinMineFails: with a model that does not load, remember and
// pin write the note and the fact, warn on stderr that they are not
// searchable yet, and exit 0, so nobody runs them again.
func TestRememberPinMineFails(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	t.Setenv("HIVEMEM_MODEL_DIR", hometest.BrokenModelDir(t))
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

// smallDisk mounts a tmpfs of size bytes for the test, or skips the test
// where it cannot (not root, no mount).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk fills the file system of dir until leave bytes are free.
func fillDisk(t *testing.T, dir string, leave int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if err != nil {
			break
		}
	}
	if err := f.Truncate(max(n-leave, 0)); err != nil {
		t.Fatal(err)
	}
}

// tempFiles lists atomic-write temp files anywhere under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && atomicio.IsTempName(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestRememberOnANearlyFullDisk: with 24 KiB left, too little for the
// index to open (its WAL index alone takes 32 KiB) but enough for the note,
// `remember` saves the note, warns that the index could not be opened and
// why — "no space left on device", not a bare SQLite I/O error — and
// exits 0. Once the disk is full, `pin` fails saying so, and no failed
// write leaves a temp file behind.
func TestRememberOnANearlyFullDisk(t *testing.T) {
	disk := smallDisk(t, 512<<10)
	h := newProcHome(t)
	h.root = filepath.Join(disk, "home")
	hm := home.Home{Root: h.root}
	h.mem, _ = hm.MemoryPath("alice")
	if code, _, errOut := h.run("init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if code, _, errOut := h.run("remember", "alice", "a first note while there is room"); code != 0 {
		t.Fatalf("remember: %s", errOut)
	}
	// The index opens afresh in each process: drop its WAL index so the
	// next open needs the space again.
	os.Remove(filepath.Join(h.root, "palace", "palace.db-shm"))
	fillDisk(t, disk, 24<<10)

	note := "NEARFULL " + strings.Repeat("a note that fits in the space left. ", 60)
	code, out, errOut := h.run("remember", "alice", note)
	if code != 0 {
		t.Fatalf("remember on a nearly full disk: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "not indexed yet") || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("remember output does not say the note is saved but the disk is full:\n%s%s", out, errOut)
	}
	data, err := os.ReadFile(h.mem)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), note) {
		t.Fatalf("the note is not in memory.md:\n%s", data)
	}
	if tf := tempFiles(t, h.root); len(tf) > 0 {
		t.Errorf("temp files left behind: %v", tf)
	}

	fillDisk(t, disk, 0)
	code, out, errOut = h.run("pin", "alice", "a fact for a full disk "+strings.Repeat("x", 1500))
	if code == 0 || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("pin on a full disk: exit %d, want a failure saying the disk is full:\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(h.mem); !bytes.Equal(after, data) {
		t.Error("a failed pin changed memory.md")
	}
	if tf := tempFiles(t, h.root); len(tf) > 0 {
		t.Errorf("temp files left behind by the failed pin: %v", tf)
	}
}

// TestWritesLeaveNoLockFileInTheHive: every command that writes the hive
// keeps its lock files under palace/locks, so a hive kept in git holds only
// what agents and people wrote.
func TestWritesLeaveNoLockFileInTheHive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	t.Setenv("HIVEMEM_HOME", "")
	conv := filepath.Join(t.TempDir(), "talk.md")
	if err := os.WriteFile(conv, []byte("# A talk\n\n**User:** where is the deploy key?\n\n**Assistant:** in the vault under ops/deploy.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{{"init"}}
	for i := range 6 { // enough for a condensation that shrinks the file
		steps = append(steps, []string{"remember", "alice", strings.Repeat(fmt.Sprintf("deploy step %d failed on a cold cache; ", i), 3), "--heading", fmt.Sprintf("deploy %d", i)})
	}
	steps = append(steps, [][]string{
		{"pin", "alice", "the staging host is stg-3"},
		{"unpin", "alice", "the staging host is stg-3"},
		{"forget", "alice", "--heading", "deploy 2"},
		{"import", "markdown", conv, "--agent", "alice"},
		{"reflect", "--now", "alice"},
		{"restore", "alice", "latest"},
	}...)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte("[reflector]\nrecent_keep = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range steps {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), append([]string{"--home", root}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s%s", args, code, out.String(), errOut.String())
		}
		if args[0] == "reflect" && !strings.Contains(out.String(), "condensed") {
			t.Fatalf("reflect did not condense: %s", out.String())
		}
		var locks []string
		err := filepath.WalkDir(filepath.Join(root, "hive"), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasSuffix(d.Name(), atomicio.LockSuffix) {
				rel, _ := filepath.Rel(root, p)
				locks = append(locks, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(locks) > 0 {
			t.Fatalf("after %s the hive holds lock files: %v", args, locks)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(root, "palace", atomicio.LocksDir)); err != nil || len(entries) == 0 {
		t.Errorf("palace/locks holds %d files (%v), want the commands' locks", len(entries), err)
	}
}
