package app

import (
	"context"
	"errors"
	"os"

	"github.com/hivemem/hivemem/internal/palace"
)

// MineAgentRequest is a watcher's mine of one agent: its whole directory,
// or the files that changed.
type MineAgentRequest struct {
	Agent string
	// Whole mines the agent's whole directory, as `hivemem mine --agent`
	// does: memory.md and the imported conversations in sessions/ (room
	// session), files gone from it losing their drawers.
	Whole bool
	// Files are the files that changed (memory.md, session files), each
	// mined alone, so that a change to one conversation costs no hash of
	// the others; none: memory.md.
	Files []string
}

// MineAgentResult is what an agent's mine did.
type MineAgentResult struct {
	Report MineReport
	// Gone: there was nothing to mine and nothing of the agent in the
	// index (its directory went, or it is a file named like an agent).
	Gone bool
}

// MineAgent brings one agent's drawers in step with its files, under the
// palace write lock (taken once for all its files, without telling who
// waits: the manager's mines are its own). A memory file (or directory)
// that is gone is mined all the same when the index still has its files,
// so that they lose their drawers.
func (a *App) MineAgent(ctx context.Context, r MineAgentRequest) (MineAgentResult, error) {
	h := a.home
	var path, prefix string
	var err error
	if r.Whole {
		path, err = h.AgentDir(r.Agent)
		prefix = h.Rel(path) + "/"
	} else {
		path, err = h.MemoryPath(r.Agent)
		prefix = h.Rel(path)
	}
	if err != nil {
		return MineAgentResult{Gone: true}, nil // no agent's: nothing to mine
	}
	paths := r.Files
	if r.Whole || len(r.Files) == 0 || len(r.Files) == 1 && r.Files[0] == path {
		fi, err := os.Stat(path)
		if r.Whole && err == nil && !fi.IsDir() {
			return MineAgentResult{Gone: true}, nil // a file in hive/agents named like an agent
		}
		if errors.Is(err, os.ErrNotExist) {
			// Nothing to mine; drawers of a deleted file are removed below.
			known, ferr := a.store.Files(ctx, prefix)
			if ferr == nil && len(known) == 0 {
				a.reportSkips(path, nil, true) // a skipped file gone with it
				return MineAgentResult{Gone: true}, nil
			}
		}
		paths = []string{path}
	}
	release, err := a.lock.Acquire(ctx, nil)
	if err != nil {
		return MineAgentResult{}, err
	}
	defer release()
	var rep palace.MineReport
	for _, p := range paths {
		one, err := a.mine(ctx, p, palace.MineOptions{})
		rep.Add(one)
		rep.Seconds += one.Seconds
		if err != nil {
			return MineAgentResult{Report: mineReportOf(rep)}, err
		}
	}
	return MineAgentResult{Report: mineReportOf(rep)}, nil
}
