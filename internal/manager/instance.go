package manager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
)

// Instance files in the palace directory: the flock held for the life of
// `hivemem run`, and the record of who holds it.
const (
	LockFile = "run.lock"
	PIDFile  = "run.pid"
)

// ErrRunning is wrapped by Claim's error when another `hivemem run` serves
// the home.
var ErrRunning = errors.New("hivemem run is already running")

// Instance describes a running manager, as recorded in palace/run.pid.
type Instance struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	HTTP    string    `json:"http,omitempty"` // the address actually listened on
	Version string    `json:"version,omitempty"`
	Home    string    `json:"home"`
}

// Claim is this process's hold on a home as its one manager.
type Claim struct {
	h    home.Home
	fl   *flock.Flock
	mu   sync.Mutex
	inst Instance
	done bool
}

// claimWait is how long Claim retries a busy instance lock: `hivemem
// status` takes it for an instant to see whether a manager runs, and must
// not make a starting manager give up.
const claimWait = time.Second

// NewClaim makes this process the manager of h: it takes the instance lock
// (palace/run.lock, held until Release) and writes palace/run.pid. Another
// live manager makes it fail with an error wrapping ErrRunning that names
// that manager's pid. A lock left by a killed manager is free (the kernel
// drops a dead process's flock), and its stale pid file is overwritten.
func NewClaim(h home.Home, version string) (*Claim, error) {
	if err := h.MkdirAll(h.PalaceDir()); err != nil {
		return nil, fmt.Errorf("claim home %s: %w", h.Root, err)
	}
	fl := flock.New(filepath.Join(h.PalaceDir(), LockFile), flock.SetPermissions(0o644))
	deadline := time.Now().Add(claimWait)
	for {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("claim home %s: lock %s: %w", h.Root, fl.Path(), err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			inst, rerr := readInstance(h)
			if rerr != nil {
				return nil, fmt.Errorf("%w for home %s (its pid file is unreadable: %v)", ErrRunning, h.Root, rerr)
			}
			return nil, fmt.Errorf("%w for home %s: pid %d, started %s%s", ErrRunning, h.Root, inst.PID,
				inst.Started.Local().Format(time.RFC3339), httpNote(inst.HTTP))
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := &Claim{h: h, fl: fl, inst: Instance{PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Millisecond), Version: version, Home: h.Root}}
	if err := c.write(); err != nil {
		_ = fl.Unlock()
		return nil, err
	}
	return c, nil
}

func httpNote(addr string) string {
	if addr == "" {
		return ""
	}
	return ", serving http://" + addr
}

// Instance is what the claim records.
func (c *Claim) Instance() Instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inst
}

// SetHTTP records the address the manager listens on, so that `status`
// and scripts can find it (useful with --http 127.0.0.1:0).
func (c *Claim) SetHTTP(addr string) error {
	c.mu.Lock()
	c.inst.HTTP = addr
	c.mu.Unlock()
	return c.write()
}

func (c *Claim) write() error {
	c.mu.Lock()
	data, err := json.MarshalIndent(c.inst, "", "  ")
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	if err := app.WriteRunFile(c.h, PIDFile, append(data, '\n')); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	return nil
}

// Release removes the pid file and drops the instance lock. Calling it
// twice is harmless.
func (c *Claim) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	c.done = true
	// Remove the record first: once the lock is free another manager may
	// write its own.
	rerr := os.Remove(filepath.Join(c.h.PalaceDir(), PIDFile))
	if errors.Is(rerr, fs.ErrNotExist) {
		rerr = nil
	}
	uerr := c.fl.Unlock()
	if err := errors.Join(rerr, uerr); err != nil {
		return fmt.Errorf("release home %s: %w", c.h.Root, err)
	}
	return nil
}

// Running reports whether a manager serves h, and which. It probes the
// instance lock (a shared lock taken and dropped at once), so a pid file
// left by a killed manager is never mistaken for a live one.
func Running(h home.Home) (Instance, bool, error) {
	path := filepath.Join(h.PalaceDir(), LockFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return Instance{}, false, nil
	}
	fl := flock.New(path, flock.SetPermissions(0o644))
	ok, err := fl.TryRLock()
	if err != nil {
		return Instance{}, false, fmt.Errorf("probe manager lock %s: %w", path, err)
	}
	if ok {
		_ = fl.Unlock()
		return Instance{}, false, nil
	}
	inst, err := readInstance(h)
	if err != nil {
		// Locked but unrecorded: a manager that is starting or stopping.
		return Instance{Home: h.Root}, true, nil
	}
	return inst, true, nil
}

func readInstance(h home.Home) (Instance, error) {
	var inst Instance
	data, err := os.ReadFile(filepath.Join(h.PalaceDir(), PIDFile))
	if err != nil {
		return inst, err
	}
	if err := json.Unmarshal(data, &inst); err != nil {
		return inst, fmt.Errorf("parse %s: %w", PIDFile, err)
	}
	return inst, nil
}
