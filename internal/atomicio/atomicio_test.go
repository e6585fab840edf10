package atomicio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// childEnv switches the test binary into a helper child process (see
// TestMain); its value names the role. childPathEnv is the file it works on.
const (
	childEnv     = "HIVEMEM_ATOMICIO_CHILD"
	childPathEnv = "HIVEMEM_ATOMICIO_PATH"
)

func TestMain(m *testing.M) {
	path := os.Getenv(childPathEnv)
	filetest.ChildMain(m, childEnv, map[string]func() error{
		"writer":       func() error { return childWriter(path) },
		"locker":       func() error { return childLocker(path) },
		"slowappender": func() error { return childSlowAppender(path) },
		"stuckswapper": func() error { return childStuckSwapper(path) },
		"oldlocker":    func() error { return childOldLocker(path) },
	})
}

// crashContents returns the two large, distinct contents the crash test
// alternates between; large so that a torn write would be visible.
func crashContents() (a, b []byte) {
	a = bytes.Repeat([]byte("A line of memory that must never tear.\n"), 4096)
	b = bytes.Repeat([]byte("B other memory, also whole or nothing!\n"), 3000)
	return a, b
}

// childWriter rewrites path with A and B forever, until it is killed.
func childWriter(path string) error {
	a, b := crashContents()
	fmt.Println("ready")
	for i := 0; ; i++ {
		data := a
		if i%2 == 1 {
			data = b
		}
		if err := WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
}

// childLocker takes the lock on path, says so on stdout, and holds it until
// its stdin is closed.
func childLocker(path string) error {
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return unlock()
}

// childSlowAppender opens path for append as an agent does (no lock),
// says so, and writes its line only when told to on stdin: an appender
// descheduled between its open and its write.
func childSlowAppender(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	fmt.Println("opened")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	if _, err := f.WriteString("late agent line\n"); err != nil {
		return err
	}
	return f.Close()
}

// childStuckSwapper replaces path under its lock and then sits in Salvage's
// grace for an hour: a writer that is killed after its swap, before it has
// carried the late appends.
func childStuckSwapper(path string) error {
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		return err
	}
	defer unlock()
	fh, old, err := ReadForSwap(path)
	if err != nil {
		return err
	}
	_, err = Swap(path, fh, int64(len(old)), append(old, "swapped line\n"...), 0o644, time.Hour)
	return err
}

func startChild(t *testing.T, role, path string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := filetest.ChildCommand(t, childEnv, role, childPathEnv+"="+path)
	stdin, stdout := filetest.StartPiped(t, cmd)
	return cmd, stdin, stdout
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		existing *os.FileMode // nil: no file before the write
		perm     os.FileMode
		wantMode os.FileMode
	}{
		{name: "new file gets perm", perm: 0o640, wantMode: 0o640},
		{name: "existing file keeps its mode", existing: ptr(os.FileMode(0o600)), perm: 0o644, wantMode: 0o600},
		{name: "existing world-readable file", existing: ptr(os.FileMode(0o644)), perm: 0o600, wantMode: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "memory.md")
			if tt.existing != nil {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, *tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, []byte("new contents\n"), tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "new contents\n" {
				t.Errorf("contents = %q", got)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.wantMode)
			}
			assertNoTemp(t, dir)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if IsTempName(e.Name()) {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// TestWriteFileKeepsSymlink: WriteFile through a symlink writes its
// target and keeps the link, and through a dangling one creates the target.
func TestWriteFileKeepsSymlink(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.md")
		link := filepath.Join(dir, "memory.md")
		if !dangling {
			filetest.Write(t, real, "old")
		}
		if err := os.Symlink("real.md", link); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(link, []byte("new"), 0o644); err != nil {
			t.Fatalf("dangling=%v: %v", dangling, err)
		}
		if li, err := os.Lstat(link); err != nil || li.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("dangling=%v: link replaced by a regular file (err %v)", dangling, err)
		}
		if got, _ := os.ReadFile(real); string(got) != "new" {
			t.Errorf("dangling=%v: link target = %q, want %q", dangling, got, "new")
		}
	}
}

func TestWriteFileErrorLeavesOldFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to write
	}{
		{
			name: "target is a directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "memory.md")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
		},
		{
			name: "directory missing",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(dir, "nope", "memory.md")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			if err := WriteFile(path, []byte("x"), 0o644); err == nil {
				t.Fatal("WriteFile succeeded, want error")
			}
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteFileReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")
	filetest.Write(t, path, "old")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	err := WriteFile(path, []byte("new"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "memory.md") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("old file changed to %q", got)
	}
}

// TestCrashNeverTears kills a child process at random moments while it
// rewrites a file with A and B in a loop; the file must always be exactly A or
// exactly B afterwards.
func TestCrashNeverTears(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")
	a, b := crashContents()
	if err := WriteFile(path, a, 0o644); err != nil {
		t.Fatal(err)
	}
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	for i := range rounds {
		cmd, stdin, out := startChild(t, "writer", path)
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("child did not start: %q, %v", line, err)
		}
		time.Sleep(time.Duration(rand.IntN(40_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		_ = stdin.Close()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child did not die by SIGKILL: %v", i, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("round %d: file is neither A nor B (len %d)", i, len(got))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "memory.md" && !IsTempName(e.Name()) {
			t.Errorf("unexpected file %q after crashes", e.Name())
		}
	}
}

func TestCleanTemp(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * StaleTempAge)
	files := []struct {
		name     string
		stale    bool
		wantKept bool
	}{
		{name: ".memory.md.123.tmp", stale: true, wantKept: false},
		{name: ".memory.md.456.tmp", stale: false, wantKept: true}, // a write may be in progress
		{name: "memory.md", stale: true, wantKept: true},
		{name: "notes.tmp", stale: true, wantKept: true}, // not ours: no leading dot
		{name: ".tmp", stale: true, wantKept: true},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		filetest.Write(t, p, "x")
		if f.stale {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := CleanTemp(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if kept := err == nil; kept != f.wantKept {
			t.Errorf("%s: kept = %v, want %v", f.name, kept, f.wantKept)
		}
	}
	if err := CleanTemp(filepath.Join(dir, "missing")); err == nil {
		t.Error("CleanTemp of a missing directory succeeded")
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	cmd, stdin, out := startChild(t, "locker", path)
	if line, err := out.ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child did not lock: %q, %v", line, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if unlock, err := Lock(ctx, path); err == nil {
		_ = unlock()
		t.Fatal("Lock succeeded while another process holds the lock")
	} else if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "locked by another writer") {
		t.Fatalf("err = %v, want ErrLocked", err)
	}

	// Release in the child; a waiting Lock must then get it.
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = stdin.Close()
	}()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	unlock, err := Lock(ctx2, path)
	if err != nil {
		t.Fatalf("Lock after child released: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("Lock created the file itself; it must only touch the .lock sidecar")
	}
}

func TestUpdate(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		existing  *string
		fn        func(old []byte) ([]byte, error)
		wantErr   error
		want      *string // nil: file must not exist
		wantWrite bool
	}{
		{
			name: "missing file reads as nil",
			fn: func(old []byte) ([]byte, error) {
				if old != nil {
					return nil, fmt.Errorf("old = %q, want nil", old)
				}
				return []byte("first\n"), nil
			},
			want: ptr("first\n"), wantWrite: true,
		},
		{
			name:     "append",
			existing: ptr("a\n"),
			fn:       func(old []byte) ([]byte, error) { return append(old, "b\n"...), nil },
			want:     ptr("a\nb\n"), wantWrite: true,
		},
		{
			name:     "same bytes are not written",
			existing: ptr("a\n"),
			fn:       func(old []byte) ([]byte, error) { return old, nil },
			want:     ptr("a\n"),
		},
		{
			name:     "fn error leaves file untouched",
			existing: ptr("a\n"),
			fn:       func([]byte) ([]byte, error) { return []byte("x"), errBoom },
			wantErr:  errBoom,
			want:     ptr("a\n"),
		},
		{
			name: "empty result for missing file writes nothing",
			fn:   func([]byte) ([]byte, error) { return nil, nil },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.md")
			past := time.Now().Add(-time.Hour).Truncate(time.Second)
			if tt.existing != nil {
				if err := os.WriteFile(path, []byte(*tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(path, past, past); err != nil {
					t.Fatal(err)
				}
			}
			err := Update(context.Background(), path, 0o644, tt.fn)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == nil && rerr == nil:
				t.Fatalf("file exists with %q, want none", got)
			case tt.want != nil && string(got) != *tt.want:
				t.Fatalf("contents = %q (err %v), want %q", got, rerr, *tt.want)
			}
			if tt.existing != nil {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if wrote := !fi.ModTime().Equal(past); wrote != tt.wantWrite {
					t.Errorf("wrote = %v, want %v", wrote, tt.wantWrite)
				}
			}
		})
	}
}

// TestUpdateSerialises runs many concurrent read-modify-write updates; with
// the lock none of them may be lost.
func TestUpdateSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter")
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				errs <- Update(ctx, path, 0o644, func(old []byte) ([]byte, error) {
					n := 0
					if len(old) > 0 {
						var err error
						if n, err = strconv.Atoi(string(old)); err != nil {
							return nil, err
						}
					}
					return []byte(strconv.Itoa(n + 1)), nil
				})
				cancel()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d (updates lost)", got, workers*each)
	}
}

func TestUpdateLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unlock() }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	called := false
	err = Update(ctx, path, 0o644, func([]byte) ([]byte, error) { called = true; return []byte("x"), nil })
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrLocked wrapping the deadline", err)
	}
	if called {
		t.Error("fn ran without the lock")
	}
}

func TestIsTempName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{".memory.md.123.tmp", true},
		{".x.tmp", true},
		{".tmp", false},
		{"memory.md", false},
		{"memory.tmp", false},
		{".memory.md", false},
	}
	for _, tt := range tests {
		if got := IsTempName(tt.name); got != tt.want {
			t.Errorf("IsTempName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestUpdateKeepsConcurrentAppend: an agent appends (without the lock)
// after Update has read the file and before it swaps the new one in; the
// appended bytes must end up in the new file.
func TestUpdateKeepsConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "one\n")
	err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		f.WriteString("agent line\n")
		f.Close()
		return append([]byte("zero\n"), old...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "zero\none\nagent line\n" {
		t.Fatalf("file = %q, the concurrent append was lost", got)
	}
}

// TestUpdateWaitsForSlowAppender: an agent opened the file before Update
// swapped it and writes long after the grace period (a loaded machine can
// deschedule it that long). While it still holds the old file open,
// Update keeps watching, so its line reaches the new file.
func TestUpdateWaitsForSlowAppender(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc to see who holds the file open")
	}
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "one\n")
	cmd, stdin, stdout := startChild(t, "slowappender", path)
	if line, err := stdout.ReadString('\n'); err != nil || line != "opened\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	done := prependInBackground(path)
	time.Sleep(10 * DefaultSalvageGrace) // well past the grace
	select {
	case err := <-done:
		t.Fatalf("Update returned (%v) while an appender still held the old file open", err)
	default:
	}
	releaseAppender(t, cmd, stdin)
	if got := updated(t, path, done); got != "zero\none\nlate agent line\n" {
		t.Fatalf("file = %q, the late append was lost", got)
	}
}

// TestRecover: a replaced file kept by Swap (the writer was killed before
// it finished salvaging, or an agent held it open past SalvageMaxWait) is
// carried into the live file by the next Recover and then removed; a kept
// file that is still the live one (killed before the swap) is only removed.
func TestRecover(t *testing.T) {
	for _, c := range []struct {
		name     string
		liveSame bool   // the kept file is the live file itself
		late     string // written to the kept file past its offset
		want     string
	}{
		{name: "late bytes carried", late: "late line\n", want: "new\nlate line\n"},
		{name: "nothing late", want: "new\n"},
		{name: "killed before the swap", liveSame: true, want: "old\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "memory.md")
			filetest.Write(t, path, "old\n")
			kept := keptName(dir, "memory.md", int64(len("old\n")))
			if err := os.Link(path, kept); err != nil {
				t.Fatal(err)
			}
			if !c.liveSame {
				if err := WriteFile(path, []byte("new\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.late != "" {
				f, err := os.OpenFile(kept, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(c.late); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			n, err := Recover(path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != c.want || n != int64(len(c.late)) && !c.liveSame {
				t.Errorf("file %q after carrying %d bytes, want %q", got, n, c.want)
			}
			if _, err := os.Stat(kept); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("kept file still there (%v)", err)
			}
		})
	}
}

// TestKeptOffset: only Swap's kept names for this file parse.
func TestKeptOffset(t *testing.T) {
	for _, c := range []struct {
		name string
		off  int64
		ok   bool
	}{
		{".memory.md.120.a1b2c3.swapped", 120, true},
		{".memory.md.0.a1b2c3.swapped", 0, true},
		{".other.md.120.a1b2c3.swapped", 0, false},
		{".memory.md.-1.a1b2c3.swapped", 0, false},
		{".memory.md.x.a1b2c3.swapped", 0, false},
		{".memory.md.120.a1b2c3.tmp", 0, false},
		{"memory.md", 0, false},
	} {
		off, ok := keptOffset(c.name, "memory.md")
		if off != c.off || ok != c.ok {
			t.Errorf("keptOffset(%q) = %d, %v; want %d, %v", c.name, off, ok, c.off, c.ok)
		}
	}
}

// TestKilledAfterSwap: a writer is killed right after its swap, before it
// has carried an agent's late append (made through a descriptor opened
// before the swap). The replaced file was kept, so the next locked access
// carries the line: it is not lost with the writer.
func TestKilledAfterSwap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "first line\n")
	agent, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	cmd, stdin, _ := startChild(t, "stuckswapper", path)
	defer stdin.Close()
	for { // until the child's swap is visible
		now, err := os.Stat(path)
		if err == nil && !os.SameFile(before, now) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := agent.WriteString("late agent line\n"); err != nil {
		t.Fatal(err)
	}
	agent.Close()
	err = Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) { return old, nil })
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "first line\nswapped line\nlate agent line\n" {
		t.Errorf("file after the next update = %q", got)
	}
	if kept, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"+keptSuffix)); len(kept) != 0 {
		t.Errorf("kept files left: %v", kept)
	}
}

// The write path's promise, held against adversarial writers: no line a
// writer was told was written is ever lost, and bad input fails with a
// clear error instead of hanging or dropping data.

// TestUpdateMissingFileRacesAgentCreate: Update finds no file (old is
// nil, so there is nothing to salvage from), and before it renames its
// result into place an agent creates the file with `>>` (O_APPEND|O_CREAT)
// and writes a line. The rename replaces the agent's file and its line is
// gone although the agent's write succeeded.
func TestUpdateMissingFileRacesAgentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	calls := 0
	err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
		calls++
		if calls > 1 {
			// Update noticed the new file and read again.
			return append(old, "UPDATE-LINE\n"...), nil
		}
		if old != nil {
			t.Fatalf("old = %q, want nil for a missing file", old)
		}
		// The agent, between Update's open (ENOENT) and its rename.
		filetest.Append(t, path, "## agent note\nAGENT-CREATED-LINE\n")
		return []byte("# Memory — template\nUPDATE-LINE\n"), nil
	})
	if err != nil {
		// Refusing (e.g. "the file appeared meanwhile") would be fine too:
		// the writer of the template was told it failed.
		t.Logf("Update failed (acceptable): %v", err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "AGENT-CREATED-LINE") {
		t.Fatalf("the agent's line, appended to the file it created while Update ran, was lost; file = %q", got)
	}
	if err == nil && (calls != 2 || !strings.Contains(string(got), "UPDATE-LINE")) {
		t.Fatalf("Update succeeded after %d calls of fn; file = %q", calls, got)
	}
}

// TestUpdateThroughAliasedSymlinks: two memory paths are symlinks to
// one file (WriteFile documents that it follows links). Each Update locks
// "<link>.lock", so two writers through different links are not
// serialised: writer B reads, writer A completes, B renames over A's result
// and A's line is lost although A returned nil. Either both lines must be
// in the file, or A must be refused (lock busy) instead of told it wrote.
func TestUpdateThroughAliasedSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared.md")
	filetest.Write(t, target, "base\n")
	linkA, linkB := filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md")
	for _, l := range []string{linkA, linkB} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	var errA error
	errB := Update(context.Background(), linkB, 0o644, func(old []byte) ([]byte, error) {
		// A concurrent writer through the other link, while B holds its lock.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		errA = Update(ctx, linkA, 0o644, func(o []byte) ([]byte, error) {
			return append(o, "LINE-FROM-A\n"...), nil
		})
		return append(old, "LINE-FROM-B\n"...), nil
	})
	if errB != nil {
		t.Fatalf("B: %v", errB)
	}
	got, _ := os.ReadFile(target)
	if errA == nil && !strings.Contains(string(got), "LINE-FROM-A") {
		t.Fatalf("writer A was told its update succeeded, but its line is gone: file = %q", got)
	}
	if !strings.Contains(string(got), "LINE-FROM-B") {
		t.Fatalf("writer B's line is gone: file = %q", got)
	}
}

// TestUpdateOnFIFOFailsWithoutBlocking: a FIFO planted where the memory file should be must
// give a clear error, not block the writer (and its lock) until some other
// process happens to open the FIFO for writing. The test detects the block
// without timing: opening the FIFO for writing with O_NONBLOCK succeeds
// only once a reader has it open.
func TestUpdateOnFIFOFailsWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
			return append(old, "x\n"...), nil
		})
	}()
	for {
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("Update on a FIFO reported success")
			}
			t.Logf("Update on a FIFO: %v", err)
			return
		default:
		}
		w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			// Update opened the FIFO for reading and is blocked in it.
			w.Close() // unblock it (EOF) so the goroutine ends
			err := <-done
			t.Fatalf("Update blocked opening a FIFO for reading (holding the file lock) until a writer appeared; then returned %v", err)
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("open fifo for writing: %v", err)
		}
		time.Sleep(time.Millisecond) // poll; not a synchronisation point
	}
}

// TestUpdateConcurrentWritersAndAppendersKeepEveryLine: goroutines doing locked
// read-modify-write updates (what remember does) race shell processes
// appending with `>>` and no lock (what agents do). Every line of both
// kinds must be in the file at the end.
func TestUpdateConcurrentWritersAndAppendersKeepEveryLine(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "# Memory\n")
	const (
		updaters   = 6
		perUpdater = 15
		appenders  = 3
		perAppend  = 150
	)
	var procs []*exec.Cmd
	for a := range appenders {
		script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do printf '## agent %d-%%d\nAPPENDED-%d-%%05d\n' $i $i >> "$F"; i=$((i+1)); done`, perAppend, a, a)
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = append(os.Environ(), "F="+path)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	var wg sync.WaitGroup
	errs := make(chan error, updaters*perUpdater)
	for u := range updaters {
		wg.Go(func() {
			for i := range perUpdater {
				err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
					var b bytes.Buffer
					b.Write(old)
					if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
						b.WriteByte('\n')
					}
					fmt.Fprintf(&b, "## update %d-%d\nUPDATED-%d-%05d\n", u, i, u, i)
					return b.Bytes(), nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("appender: %v", err)
		}
	}
	close(errs)
	for err := range errs {
		t.Errorf("update: %v", err)
	}
	got, _ := os.ReadFile(path)
	lost := 0
	check := func(marker string) {
		if !bytes.Contains(got, []byte(marker+"\n")) {
			lost++
			if lost <= 5 {
				t.Errorf("line %s lost", marker)
			}
		}
	}
	for u := range updaters {
		for i := range perUpdater {
			check(fmt.Sprintf("UPDATED-%d-%05d", u, i))
		}
	}
	for a := range appenders {
		for i := range perAppend {
			check(fmt.Sprintf("APPENDED-%d-%05d", a, i))
		}
	}
	if lost > 0 {
		t.Fatalf("%d lines lost", lost)
	}
	assertNoTemp(t, filepath.Dir(path))
}

// TestUpdateFnErrorAndNoOpWriteNothing: an error from fn leaves the file and its
// inode untouched (no rename); returning the old bytes writes nothing.
func TestUpdateFnErrorAndNoOpWriteNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "keep\n")
	ino := func() uint64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	before := ino()
	boom := errors.New("boom")
	err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap fn's error", err)
	}
	if err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "keep\n" || ino() != before {
		t.Fatalf("file %q (inode changed: %v)", got, ino() != before)
	}
	assertNoTemp(t, filepath.Dir(path))
}

// TestUpdateCanceledContextWritesNothing: a canceled context fails before fn runs
// and writes nothing.
func TestUpdateCanceledContextWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "keep\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := Update(ctx, path, 0o644, func(old []byte) ([]byte, error) { called = true; return []byte("new\n"), nil })
	if err == nil || called {
		t.Fatalf("err = %v, fn called = %v; want an error before fn", err, called)
	}
	if got, _ := os.ReadFile(path); string(got) != "keep\n" {
		t.Fatalf("file = %q", got)
	}
}

// TestWriteFileOntoDirectory: WriteFile refuses a directory with a clear
// error and leaves no temp file. (Through a dangling symlink it creates the
// target: TestWriteFileKeepsSymlink.)
func TestWriteFileOntoDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "memory.md")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("WriteFile onto a directory: %v", err)
	}
	assertNoTemp(t, dir)
}

// TestUpdateSalvagesShellAppenderAfterSwap: a real process opens the
// file for append before Update swaps it and writes after the swap; the
// line reaches the new file (Update waits while the process holds the old
// file open). Uses sh so it needs no helper role.
func TestUpdateSalvagesShellAppenderAfterSwap(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "one\n")
	sh, stdin, stdout := filetest.StartShAppender(t, path, "SHELL-LATE-LINE")
	orig := filetest.Inode(t, path)
	done := prependInBackground(path)
	filetest.WaitSwap(t, path, orig, done)
	_ = stdout
	releaseAppender(t, sh, stdin)
	if got := updated(t, path, done); got != "zero\none\nSHELL-LATE-LINE\n" {
		t.Fatalf("file = %q", got)
	}
}

// TestUpdateOverwritesConcurrentAtomicSave: someone saves the file
// atomically (temp + rename, as editors do) after Update read it and
// before Update's rename. Salvage only watches the inode Update read, so
// the saved content — here a line that was not in the file Update read —
// is silently replaced. A compare-and-swap would notice that the file at
// the path is no longer the one read (e.g. renameat2 RENAME_EXCHANGE and
// check, or at least a re-stat before the rename) and refuse or merge.
func TestUpdateOverwritesConcurrentAtomicSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "one\n")
	err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
		filetest.EditorSave(t, path, "one\nSAVED-BY-EDITOR\n")
		return append(old, "two\n"...), nil
	})
	got, _ := os.ReadFile(path)
	if err == nil && !strings.Contains(string(got), "SAVED-BY-EDITOR") {
		t.Fatalf("Update reported success and the concurrently saved line is gone: file = %q", got)
	}
}

// TestUpdateKeepsLongHeldAppendFDLines: an agent that keeps its memory file open
// for append for its whole session (a logger-style `exec 3>>memory.md`, or
// a file object kept open) writes one line before an Update and one after
// it. Update watches the replaced file only for SalvageMaxWait (3 s); the
// agent's later line goes into the unlinked old inode and is lost, with no
// error anywhere.
func TestUpdateKeepsLongHeldAppendFDLines(t *testing.T) {
	if testing.Short() {
		t.Skip("waits SalvageMaxWait")
	}
	path := filepath.Join(t.TempDir(), "memory.md")
	filetest.Write(t, path, "one\n")
	sh, stdin, _ := filetest.StartShAppender(t, path, "LINE-FROM-LONG-LIVED-FD")
	// Update returns once it stops watching (the agent still holds the
	// old file open, so that is after SalvageMaxWait).
	if err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
		return append(old, "two\n"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	releaseAppender(t, sh, stdin)
	// The replaced file was kept while the agent held it; the next locked
	// access (here a no-op Update) carries what the agent wrote since.
	if err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if kept, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"+keptSuffix)); len(kept) != 0 {
		t.Errorf("kept files left after the agent closed its descriptor: %v", kept)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "LINE-FROM-LONG-LIVED-FD") {
		t.Fatalf("the agent's write through its long-lived descriptor is lost: file = %q", got)
	}
}

// TestReadForSwap: the read Update and restores make before a Swap returns
// the contents with the file still open (a missing file is no file and no
// error), and refuses what is not a regular file without blocking.
func TestReadForSwap(t *testing.T) {
	dir := t.TempDir()
	if f, data, err := ReadForSwap(filepath.Join(dir, "missing.md")); f != nil || data != nil || err != nil {
		t.Errorf("missing file: %v, %q, %v; want nil, nil, nil", f, data, err)
	}
	path := filepath.Join(dir, "memory.md")
	filetest.Write(t, path, "one\n")
	f, data, err := ReadForSwap(path)
	if err != nil || string(data) != "one\n" {
		t.Fatalf("regular file: %q, %v", data, err)
	}
	defer f.Close()
	if same, err := sameFile(f, path); err != nil || !same {
		t.Errorf("the open file is not %s: %v, %v", path, same, err)
	}
	for name, mk := range map[string]func(p string) error{
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		p := filepath.Join(dir, name)
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
		if f, _, err := ReadForSwap(p); err == nil || f != nil {
			t.Errorf("%s: %v, %v; want an error and no file", name, f, err)
		}
	}
}

// prependInBackground runs an Update of path that puts a line "zero"
// first, and returns its result.
func prependInBackground(path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
			return append([]byte("zero\n"), old...), nil
		})
	}()
	return done
}

// releaseAppender tells an appender waiting on its stdin (a slowappender
// child or filetest.StartShAppender's sh) to write its line, and waits for
// it to exit.
func releaseAppender(t *testing.T, cmd *exec.Cmd, stdin io.Writer) {
	t.Helper()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("appender: %v", err)
	}
}

// updated waits for the Update whose result is done and returns the file
// at path then.
func updated(t *testing.T, path string, done <-chan error) string {
	t.Helper()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}
