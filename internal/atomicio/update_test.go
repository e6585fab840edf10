package atomicio

// Adversarial checks of the write path's promise that no line a
// writer was told was written is ever lost, and that bad input fails with a
// clear error instead of hanging or dropping data.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// appendRaw appends text the way an agent does: O_APPEND (creating the file
// when missing), one write, close, no lock.
func appendRaw(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

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
		appendRaw(t, path, "## agent note\nAGENT-CREATED-LINE\n")
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
	if err := os.WriteFile(target, []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(path, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(path, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(path, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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

// TestWriteFileOntoDirectoryAndDanglingLink: WriteFile refuses a
// directory with a clear error, and through a dangling symlink creates the
// target while keeping the link.
func TestWriteFileOntoDirectoryAndDanglingLink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "memory.md")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("WriteFile onto a directory: %v", err)
	}
	assertNoTemp(t, dir)

	link := filepath.Join(dir, "link.md")
	if err := os.Symlink("target.md", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if li, err := os.Lstat(link); err != nil || li.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "target.md")); string(got) != "data\n" {
		t.Fatalf("target = %q", got)
	}
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
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, stdin, stdout := filetest.StartShAppender(t, path, "SHELL-LATE-LINE")
	orig := filetest.Inode(t, path)
	done := make(chan error, 1)
	go func() {
		done <- Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
			return append([]byte("zero\n"), old...), nil
		})
	}()
	filetest.WaitSwap(t, path, orig, done)
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if err := sh.Wait(); err != nil {
		t.Fatalf("sh: %v", err)
	}
	_ = stdout
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "zero\none\nSHELL-LATE-LINE\n" {
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
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, stdin, _ := filetest.StartShAppender(t, path, "LINE-FROM-LONG-LIVED-FD")
	// Update returns once it stops watching (the agent still holds the
	// old file open, so that is after SalvageMaxWait).
	if err := Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
		return append(old, "two\n"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if err := sh.Wait(); err != nil {
		t.Fatal(err)
	}
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
