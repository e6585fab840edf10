package writelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// helperEnv makes the test binary a process that holds the lock until it
// is killed.
const helperEnv = "WRITELOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		if _, err := New(dir, "hivemem helper").Acquire(context.Background(), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Hour) // hold until killed
	}
	os.Exit(m.Run())
}

func TestAcquireSerialisesInProcess(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		second *Lock // another handle on the same palace
	}{
		{"same handle", nil},
		{"second handle (separate flock)", New(dir, "hivemem other")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := New(dir, "hivemem first")
			second := tc.second
			if second == nil {
				second = first
			}
			release, err := first.Acquire(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got atomic.Bool
			var told atomic.Int32
			done := make(chan error, 1)
			go func() {
				rel, err := second.Acquire(t.Context(), func(Holder) { told.Add(1) })
				if err == nil {
					got.Store(true)
					rel()
				}
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // give the second a chance to (wrongly) get in
			if got.Load() {
				t.Fatal("second acquire succeeded while the lock was held")
			}
			release()
			release() // idempotent
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("second acquire never got the lock")
			}
			if tc.second != nil && told.Load() != 1 {
				t.Errorf("waiting callback called %d times, want once", told.Load())
			}
		})
	}
}

func TestAcquireGivesUpNamingTheHolder(t *testing.T) {
	dir := t.TempDir()
	release, err := New(dir, "hivemem run").Acquire(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var seen Holder
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = New(dir, "hivemem mine").Acquire(ctx, func(h Holder) { seen = h })
	if !errors.Is(err, ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrBusy and DeadlineExceeded", err)
	}
	want := fmt.Sprintf("hivemem run (pid %d)", os.Getpid())
	if !strings.Contains(err.Error(), "held by "+want) {
		t.Errorf("error %q does not name the holder %q", err, want)
	}
	if seen.String() != want || seen.Since.IsZero() {
		t.Errorf("waiting callback saw %+v (%q), want %q", seen, seen, want)
	}
}

func TestLockAcrossProcessesAndAfterAKill(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	_, out := filetest.StartPiped(t, cmd)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := out.ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = New(dir, "hivemem mine").Acquire(ctx, nil)
	want := fmt.Sprintf("held by hivemem helper (pid %d)", cmd.Process.Pid)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrBusy %s", err, want)
	}

	// The kernel drops a dead holder's flock: no stale lock to clean up.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel2()
	release, err := New(dir, "hivemem mine").Acquire(ctx2, nil)
	if err != nil {
		t.Fatalf("lock of a killed holder not free: %v", err)
	}
	release()
	if h := ReadHolder(dir); h.Command != "hivemem mine" || h.PID != os.Getpid() {
		t.Errorf("holder record %+v, want this process's", h)
	}
}

func TestHolderString(t *testing.T) {
	tests := []struct {
		h    Holder
		want string
	}{
		{Holder{PID: 12, Command: "hivemem run"}, "hivemem run (pid 12)"},
		{Holder{Command: "hivemem mine"}, "hivemem mine"},
		{Holder{}, "another process"},
	}
	for _, tc := range tests {
		if got := tc.h.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.h, got, tc.want)
		}
	}
}
