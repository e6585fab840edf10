package atomicio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// childOldLocker locks path the way versions before palace/locks did —
// a flock on the sidecar "<path>.lock", made if missing — says so, and
// holds it until its stdin is closed.
func childOldLocker(path string) error {
	f, err := os.OpenFile(path+LockSuffix, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return f.Close()
}

// newHome makes the skeleton of a hivemem home (hive/agents/ is what marks
// one) and returns its root, with symlinks resolved.
func newHome(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "hive", "agents", "coder"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// lockFiles lists the *.lock files under dir.
func lockFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), LockSuffix) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLockPathPlacesAHomesLocksUnderPalaceLocks(t *testing.T) {
	root := newHome(t)
	locks := filepath.Join(root, "palace", LocksDir)
	long := "hive/sessions/" + strings.Repeat("é", 150) + ".md"
	tests := []struct {
		rel  string
		want string // lock file name under palace/locks
	}{
		{"hive/agents/coder/memory.md", "hive%2Fagents%2Fcoder%2Fmemory.md.lock"},
		{"hive/agents/coder/.condense", "hive%2Fagents%2Fcoder%2F.condense.lock"},
		{"hive/archive/coder/2026-12.md", "hive%2Farchive%2Fcoder%2F2026-12.md.lock"},
		{"hive/agents/coder/sessions/.ab12", "hive%2Fagents%2Fcoder%2Fsessions%2F.ab12.lock"},
		{"hive/agents/odd%2Fname/memory.md", "hive%2Fagents%2Fodd%252Fname%2Fmemory.md.lock"},
		{"config.toml", "config.toml.lock"},
		{"palace/reflector-state.json", "palace%2Freflector-state.json.lock"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			got := LockPath(filepath.Join(root, filepath.FromSlash(tc.rel)))
			if want := filepath.Join(locks, tc.want); got != want {
				t.Errorf("LockPath = %s, want %s", got, want)
			}
			if other, dup := seen[got]; dup {
				t.Errorf("%s and %s share the lock %s", tc.rel, other, got)
			}
			seen[got] = tc.rel
		})
	}
	t.Run("long names end in a hash", func(t *testing.T) {
		a := LockPath(filepath.Join(root, filepath.FromSlash(long)))
		b := LockPath(filepath.Join(root, filepath.FromSlash(long+"x")))
		for _, p := range []string{a, b} {
			if filepath.Dir(p) != locks || len(filepath.Base(p)) > maxLockName || !strings.HasSuffix(p, LockSuffix) {
				t.Errorf("LockPath = %s (name %d bytes), want a name of at most %d bytes in %s", p, len(filepath.Base(p)), maxLockName, locks)
			}
		}
		if a == b {
			t.Errorf("two long paths share the lock %s", a)
		}
	})
	t.Run("a file in no home keeps its sidecar", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "notes.md")
		if got := LockPath(p); got != legacyLockPath(p) {
			t.Errorf("LockPath = %s, want the sidecar %s", got, legacyLockPath(p))
		}
	})
	t.Run("a link inside the home locks its target's lock", func(t *testing.T) {
		target := filepath.Join(root, "hive", "agents", "coder", "memory.md")
		filetest.Write(t, target, "x\n")
		link := filepath.Join(root, "hive", "agents", "alias")
		if err := os.Symlink(filepath.Join(root, "hive", "agents", "coder"), link); err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"memory.md", ".condense"} {
			if got, want := LockPath(filepath.Join(link, rel)), LockPath(filepath.Join(filepath.Dir(target), rel)); got != want {
				t.Errorf("through the link %s locks %s, the real path %s", rel, got, want)
			}
		}
	})
}

func TestLockAndUpdateLeaveNoLockFileInTheHive(t *testing.T) {
	root := newHome(t)
	ctx := context.Background()
	mem := filepath.Join(root, "hive", "agents", "coder", "memory.md")
	if err := Update(ctx, mem, 0o644, func(old []byte) ([]byte, error) { return append(old, "line\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, "hive", "agents", "coder", ".condense"), filepath.Join(root, "hive", "archive", "coder", "2026-12.md")} {
		unlock, err := Lock(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := unlock(); err != nil {
			t.Fatal(err)
		}
	}
	if got := lockFiles(t, filepath.Join(root, "hive")); len(got) != 0 {
		t.Errorf("lock files in the hive: %v", got)
	}
	if got := lockFiles(t, filepath.Join(root, "palace", LocksDir)); len(got) != 3 {
		t.Errorf("lock files in palace/locks: %v, want 3", got)
	}
}

// TestLockWaitsForAnEarlierVersionsLock: a process of an earlier version
// (a `run` left running across the upgrade) holds the sidecar beside the
// memory file; Lock must not become a second writer.
func TestLockWaitsForAnEarlierVersionsLock(t *testing.T) {
	root := newHome(t)
	mem := filepath.Join(root, "hive", "agents", "coder", "memory.md")
	filetest.Write(t, mem, "# Memory\n")
	cmd, stdin, out := startChild(t, "oldlocker", mem)
	if line, err := out.ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child did not lock: %q, %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if unlock, err := Lock(ctx, mem); err == nil {
		_ = unlock()
		t.Fatal("Lock succeeded while an earlier version holds the sidecar lock")
	} else if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), mem+LockSuffix) {
		t.Fatalf("err = %v, want ErrLocked naming the sidecar", err)
	}
	// The new lock was given back with the failure: another writer of
	// this version is not kept waiting.
	if unlock, _, err := lockOne(context.Background(), mem, LockPath(mem), true); err != nil {
		t.Fatalf("the palace lock is still held after the failed Lock: %v", err)
	} else {
		_ = unlock()
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	unlock, err := Lock(ctx2, mem)
	if err != nil {
		t.Fatalf("Lock after the earlier version let go: %v", err)
	}
	// And while this version holds it, the earlier one waits.
	f, err := os.Open(mem + LockSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("an earlier version's flock on the sidecar while Lock is held: %v, want EWOULDBLOCK", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

// TestLockFollowsASidecarReplacedWhileWaiting: the sidecar Lock waits on is
// removed and a new one is taken by an earlier version; Lock must wait for
// the new one, not go on with the removed file's lock.
func TestLockFollowsASidecarReplacedWhileWaiting(t *testing.T) {
	root := newHome(t)
	mem := filepath.Join(root, "hive", "agents", "coder", "memory.md")
	filetest.Write(t, mem, "# Memory\n")
	side := mem + LockSuffix
	first := oldFlock(t, side)
	done := make(chan error, 1)
	go func() {
		unlock, err := Lock(context.Background(), mem)
		if err == nil {
			err = unlock()
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let Lock open the first sidecar and wait
	if err := os.Remove(side); err != nil {
		t.Fatal(err)
	}
	second := oldFlock(t, side)
	_ = first.Close()
	select {
	case err := <-done:
		t.Fatalf("Lock returned (%v) while an earlier version holds the new sidecar", err)
	case <-time.After(200 * time.Millisecond):
	}
	_ = second.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock never got the lock")
	}
}

// oldFlock takes an earlier version's lock on side through its own open
// file, as another process would.
func oldFlock(t *testing.T, side string) *os.File {
	t.Helper()
	f, err := os.OpenFile(side, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRemoveLegacyLocksRemovesOnlyUnusedOnes(t *testing.T) {
	root := newHome(t)
	hive := filepath.Join(root, "hive")
	agent := filepath.Join(hive, "agents", "coder")
	mem := filepath.Join(agent, "memory.md")
	filetest.Write(t, mem, "# Memory\n")
	free := []string{
		mem + LockSuffix,
		filepath.Join(agent, ".condense") + LockSuffix,
		filepath.Join(hive, "archive", "coder", "2026-12.md") + LockSuffix,
	}
	for _, p := range free {
		filetest.Write(t, p, "")
	}
	userFile := filepath.Join(agent, "notes.lock")
	filetest.Write(t, userFile, "a file someone wrote\n")
	held := filepath.Join(agent, "sessions", ".ab12") + LockSuffix
	if err := os.MkdirAll(filepath.Dir(held), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, stdin, out := startChild(t, "oldlocker", strings.TrimSuffix(held, LockSuffix))
	if line, err := out.ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child did not lock: %q, %v", line, err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	// Open but not locked elsewhere: an earlier version polling for it.
	waited := filepath.Join(hive, "archive", "coder", "2026-11.md") + LockSuffix
	filetest.Write(t, waited, "")
	wcmd, wstdin, wout := startChild(t, "slowappender", waited)
	if line, err := wout.ReadString('\n'); err != nil || line != "opened\n" {
		t.Fatalf("child did not open: %q, %v", line, err)
	}
	defer func() { _ = wstdin.Close(); _ = wcmd.Wait() }()

	n, err := RemoveLegacyLocks(context.Background(), hive)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(free) {
		t.Errorf("removed %d, want %d", n, len(free))
	}
	for _, p := range free {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("unused old lock %s kept (%v)", p, err)
		}
	}
	for _, p := range []string{userFile, held, waited} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
