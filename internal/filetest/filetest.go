// Package filetest holds the file-system helpers the write-path tests share:
// writing a file, appending to it, damaging it in place, saving it the way agents and editors do, a shell process holding a
// file open for append like an agent, the test binary as a helper child
// process, a child process on pipes, and waiting for a file to be swapped.
// It uses only the standard library, so the tests of every package
// (atomicio included) can import it.
package filetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest/testenv"
)

// Write writes content to path, making its directory first.
func Write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Temp writes content to a file named name in a new temporary directory
// and returns its path.
func Temp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	Write(t, p, content)
	return p
}

// Append appends text to path the way an agent does: O_APPEND (creating
// the file when missing), one write, close, no lock.
func Append(t testing.TB, path, text string) {
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

// EditorSave replaces path the way editors and many tools save: write a
// hidden temp file next to it, rename it over the target (a new inode, no
// lock).
func EditorSave(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".editor-save")
	Write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// VimSave replaces path the way vim does by default: the old file moved to
// a backup name, the new content written at the path, the backup removed.
func VimSave(t testing.TB, path, content string) {
	t.Helper()
	if err := os.Rename(path, path+"~"); err != nil {
		t.Fatal(err)
	}
	Write(t, path, content)
	_ = os.Remove(path + "~")
}

// Size is the size in bytes of the file at path.
func Size(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// WriteAt overwrites the file at path with data from offset off, in place
// (the same inode, as a disk fault or a stray writer damages a file).
func WriteAt(t testing.TB, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, off); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Truncate cuts the file at path to size bytes, in place.
func Truncate(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// FIFO makes a named pipe at path (and its directory), as a hostile or
// careless process plants one where a regular file belongs; the test is
// skipped where FIFOs cannot be made. The returned release lets go of
// whatever is still blocked opening it for reading (it opens and closes
// the FIFO for writing until no reader is left); the caller registers it
// with t.Cleanup where it must run before the code under test is stopped.
func FIFO(t testing.TB, path string) (release func()) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return func() {
		for range 100 {
			w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return // no reader left
			}
			w.Close()
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Inode is the inode number of the file at path.
func Inode(t testing.TB, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// WaitSwap polls until path is another file than inode orig (the swap
// happened), failing if done reports first.
func WaitSwap(t testing.TB, path string, orig uint64, done <-chan error) {
	t.Helper()
	for {
		if st, err := os.Stat(path); err == nil && st.Sys().(*syscall.Stat_t).Ino != orig {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("finished (%v) without swapping the file", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
}

// StartShAppender starts sh holding path open for append on fd 3 (opened
// now, like an agent that has just opened its file); it writes line when
// it reads a line on stdin, then exits. It returns the process, its stdin
// and its stdout (past the "opened" line). The test is skipped without sh.
func StartShAppender(t testing.TB, path, line string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command("sh", "-c", `exec 3>>"$F"; echo opened; read x; printf '%s\n' "$L" >&3`)
	cmd.Env = append(os.Environ(), "F="+path, "L="+line)
	stdin, rd := StartPiped(t, cmd)
	if l, err := rd.ReadString('\n'); err != nil || l != "opened\n" {
		t.Fatalf("sh said %q, %v", l, err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	return cmd, stdin, rd
}

// StartPiped starts cmd with pipes to its stdin and from its stdout, which
// it returns; its stderr is the test's unless cmd.Stderr is set.
func StartPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, bufio.NewReader(out)
}

// ChildMain is the TestMain of a test binary that doubles as helper child
// processes (started by ChildCommand): with env unset it runs the tests;
// set, it runs the role env names and exits 0, or 1 after printing the
// role's error on stderr, or 2 for a role it does not know.
func ChildMain(m *testing.M, env string, roles map[string]func() error) {
	role := os.Getenv(env)
	if role == "" {
		testenv.Clear() // a child keeps what its parent gave it
		os.Exit(m.Run())
	}
	run, ok := roles[role]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown %s role %q\n", env, role)
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ChildCommand is a command that runs this test binary as the helper
// child role (env=role, see ChildMain; no test runs), with the extra
// environment entries (KEY=value).
func ChildCommand(t testing.TB, env, role string, extra ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env+"="+role), extra...)
	return cmd
}

// Built is a Go program that tests run as a separate process, built once
// per test binary (by the first Path) into a temporary directory; TestMain
// calls Remove after m.Run.
type Built struct {
	once      sync.Once
	dir, path string
	err       error
}

// Path builds package pkg (as go build takes it, run in dir) as an
// executable named name the first time it is called, and returns the
// executable's path; a failed build fails the test with go's output.
func (b *Built) Path(t testing.TB, dir, pkg, name string) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "hivemem-test-"+name+"-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, name)
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the built program, if it was built.
func (b *Built) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
