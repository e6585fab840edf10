// Package writelock is the palace write lock: one writer to the index at a
// time, across processes. `hivemem run` takes it around each mine (not for
// its whole life), and the CLI write commands (mine, remember, pin, reflect,
// reindex) take it for their writes, so a CLI command run while the manager
// is up waits a moment instead of racing it.
//
// The lock is an advisory flock on palace/write.lock. The kernel drops it
// when its holder dies, so a killed process never leaves it stuck. While it
// holds the lock, the holder writes who it is (pid, command, since) into
// the file, so a waiter can say whom it is waiting for.
package writelock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// FileName is the lock file's name in the palace directory.
const FileName = "write.lock"

// ErrBusy is wrapped by Acquire's error when ctx ends before the lock is
// free.
var ErrBusy = errors.New("palace write lock is busy")

// Holder says who holds (or last held) the lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String reads "hivemem run (pid 1234)".
func (h Holder) String() string {
	cmd := h.Command
	if cmd == "" {
		cmd = "another process"
	}
	if h.PID <= 0 {
		return cmd
	}
	return fmt.Sprintf("%s (pid %d)", cmd, h.PID)
}

// Lock is the write lock of one palace, for one command. It is safe for
// concurrent use: goroutines of one process queue in process, and processes
// exclude each other through the flock.
type Lock struct {
	path    string
	command string
	sem     chan struct{}
}

// New returns the lock of the palace in palaceDir, taken on behalf of
// command (e.g. "hivemem run"), which is what waiters are told.
func New(palaceDir, command string) *Lock {
	return &Lock{path: filepath.Join(palaceDir, FileName), command: command, sem: make(chan struct{}, 1)}
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Poll bounds: the first retry of a busy lock comes after pollMin, each
// further one waits twice as long, up to pollMax.
const (
	pollMin = 5 * time.Millisecond
	pollMax = 100 * time.Millisecond
)

// Acquire waits until the lock is free, takes it and returns the function
// that releases it. If the lock is busy, waiting (when not nil) is called
// once with the current holder, so a command can tell its user why it
// waits. When ctx ends first the error wraps ErrBusy and names the holder.
func (l *Lock) Acquire(ctx context.Context, waiting func(Holder)) (release func(), err error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (held in this process): %w", ErrBusy, context.Cause(ctx))
	}
	inProcess := func() { <-l.sem }
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		inProcess()
		return nil, fmt.Errorf("palace write lock: %w", err)
	}
	fl := flock.New(l.path, flock.SetPermissions(0o644))
	delay := pollMin
	told := false
	for {
		ok, err := fl.TryLock()
		if err != nil {
			inProcess()
			return nil, fmt.Errorf("palace write lock %s: %w", l.path, err)
		}
		if ok {
			break
		}
		if !told && waiting != nil {
			told = true
			waiting(ReadHolder(filepath.Dir(l.path)))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			inProcess()
			return nil, fmt.Errorf("%w: held by %s (lock file %s): %w",
				ErrBusy, ReadHolder(filepath.Dir(l.path)), l.path, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(delay*2, pollMax)
	}
	l.announce()
	var once sync.Once
	return func() {
		once.Do(func() {
			// Unlock closes the descriptor, which drops the flock even if
			// the explicit unlock failed; nothing useful is left to do
			// with such an error.
			_ = fl.Unlock()
			inProcess()
		})
	}, nil
}

// announce writes the holder record into the lock file. It is information
// for waiters only: a failure (a read-only palace) is not a reason to give
// up a lock that is held.
func (l *Lock) announce() {
	data, err := json.Marshal(Holder{PID: os.Getpid(), Command: l.command, Since: time.Now().UTC()})
	if err != nil {
		return
	}
	_ = os.WriteFile(l.path, append(data, '\n'), 0o644)
}

// ReadHolder returns the record the current (or last) holder of the lock
// of the palace in palaceDir wrote; an empty Holder when there is none.
func ReadHolder(palaceDir string) Holder {
	var h Holder
	data, err := os.ReadFile(filepath.Join(palaceDir, FileName))
	if err != nil {
		return h
	}
	_ = json.Unmarshal(data, &h) // a record caught mid-write reads as unknown
	return h
}
