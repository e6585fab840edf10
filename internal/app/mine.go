package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

// MineRequest mines memory files into the index: the whole hive, one
// agent's directory, or a path of the caller's.
type MineRequest struct {
	// Agent mines that agent's directory (hive/agents/<id>, its
	// .gitignore honoured); "" (and no Path) the whole hive.
	Agent string `json:"agent,omitempty"`
	// Path mines a directory or file instead (the CLI's argument), its
	// drawers filed as Options say (wing, agent, room).
	Path    string      `json:"-"`
	Options MineOptions `json:"-"`
	// IfMining refuses the mine (ErrConflict) while manager.mining is off:
	// the API's "mine now" does not override the setting.
	IfMining bool `json:"-"`
	// By, when set, logs a mine event naming who asked ("api") when the
	// mine changed something.
	By string `json:"-"`
	// LockWait bounds the wait for the palace write lock (0:
	// DefaultLockWait).
	LockWait time.Duration `json:"-"`
}

// Validate checks the request without mining; every error wraps
// ErrInvalid.
func (r MineRequest) Validate() error {
	if r.Agent != "" {
		if r.Path != "" {
			return badRequest("mine: give an agent or a path, not both")
		}
		if err := home.ValidateAgentID(r.Agent); err != nil {
			return invalid(fmt.Errorf("agent: %w", err))
		}
	}
	return nil
}

// MineResult is what a mine did: the same object from `hivemem mine
// --json` and POST /api/v1/mine.
type MineResult struct {
	Agent  string     `json:"agent,omitempty"`
	Path   string     `json:"path"` // what was mined, relative to the home
	Report MineReport `json:"report"`
}

// Mine validates r and mines under the palace write lock. An agent
// without a directory, or a path that does not exist, is ErrNotFound.
func (a *App) Mine(ctx context.Context, r MineRequest) (MineResult, error) {
	if err := r.Validate(); err != nil {
		return MineResult{}, err
	}
	if r.IfMining && !a.Settings().Manager.Mining {
		return MineResult{}, conflict("mining is off (manager.mining = false): switch it on in Settings first")
	}
	path := r.Path
	switch {
	case r.Agent != "":
		mp, err := a.home.MemoryPath(r.Agent)
		if err != nil {
			return MineResult{}, invalid(err)
		}
		path = filepath.Dir(mp)
		if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
			return MineResult{}, notFound("no agent %s (no directory %s)", r.Agent, a.home.Rel(path))
		}
	case path == "":
		path = a.home.HiveDir()
	}
	release, err := a.LockFor(ctx, "mine", r.LockWait)
	if err != nil {
		return MineResult{}, err
	}
	rep, err := a.mine(ctx, path, palace.MineOptions(r.Options))
	release()
	if err != nil {
		return MineResult{}, err // the palace's errors name the path
	}
	if rep.Files == 0 && rep.FilesRemoved == 0 {
		// The palace takes a path that is gone and was never mined as
		// nothing to do (a file deleted as it was written); asked for by
		// name, it is more likely a typo.
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			return MineResult{}, notFound("mine %s: no such file or directory", path)
		}
	}
	if rep.Skipped == nil {
		rep.Skipped = []palace.Skip{}
	}
	if r.By != "" && (rep.Changed > 0 || rep.FilesRemoved > 0) {
		if err := a.events.Append(eventlog.Event{Kind: "mine", Agent: r.Agent, Data: map[string]any{
			"drawersAdded": rep.Added, "drawersRemoved": rep.Removed, "drawersKept": rep.Kept,
			"embedded": rep.Embedded, "filesRemoved": rep.FilesRemoved, "seconds": rep.Seconds, "by": r.By,
		}}); err != nil {
			a.log.Warn("cannot log the mine event", "err", err)
		}
	}
	return MineResult{Agent: r.Agent, Path: a.home.Rel(path), Report: mineReportOf(rep)}, nil
}

// ReindexRequest rebuilds the index from the markdown.
type ReindexRequest struct {
	// Options are the palace's (ReportsSkips: the caller shows the
	// report's skips, the CLI's warnings).
	Options ReindexOptions `json:"-"`
	// LockWait bounds the wait for the palace write lock (0:
	// DefaultLockWait).
	LockWait time.Duration `json:"-"`
}

// ReindexResult is what a reindex did: the same report as a mine's.
type ReindexResult struct {
	Report MineReport `json:"report"`
	// SetAside is where a damaged SQLite index was moved before the
	// rebuild (palace.db.damaged-<time>); Damage is what was wrong with it.
	SetAside string `json:"set_aside,omitempty"`
	Damage   string `json:"damage,omitempty"`
}

// Reindex drops the index and rebuilds it from the markdown, under the
// palace write lock. In an app opened with IndexLater, a damaged SQLite
// index is set aside (kept beside it) and a new one built.
func (a *App) Reindex(ctx context.Context, r ReindexRequest) (ReindexResult, error) {
	rep, err := a.reindex(ctx, r)
	var res ReindexResult
	if err != nil && a.indexDamaged(err) && a.later != nil {
		// The index is disposable: set the damaged file aside and build a
		// new one from the markdown.
		if a.store != nil {
			a.store.Close()
			a.store, a.palace, a.reflector = nil, nil, nil
		}
		moved, serr := a.idx.SetAside(time.Now())
		if serr != nil {
			return ReindexResult{}, errors.Join(err, serr)
		}
		a.log.Warn("the index was damaged; moved it aside and rebuilding it from the markdown", "err", err, "moved_to", moved)
		res.SetAside, res.Damage = moved, err.Error()
		a.later = &lazyIndex{}
		rep, err = a.reindex(ctx, r)
	}
	if err != nil {
		return res, err
	}
	if rep.Skipped == nil {
		rep.Skipped = []palace.Skip{}
	}
	res.Report = mineReportOf(rep)
	return res, nil
}

func (a *App) reindex(ctx context.Context, r ReindexRequest) (palace.MineReport, error) {
	if err := a.index(ctx); err != nil {
		return palace.MineReport{}, err
	}
	release, err := a.LockFor(ctx, "reindex", r.LockWait)
	if err != nil {
		return palace.MineReport{}, err
	}
	defer release()
	return a.palace.Reindex(ctx, palace.ReindexOptions(r.Options))
}
