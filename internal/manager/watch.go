package manager

// Watching: the event loop over fsnotify, the watches on the home,
// hive/agents, each agent directory and its sessions directory, and the
// periodic full scan that catches what the watcher missed.

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
)

// loop is the manager's event loop: it owns the watcher and the pending
// set, and hands due agents and scans to the worker.
func (m *Manager) loop(ctx context.Context, w *fsnotify.Watcher) error {
	pending := pendingSet{}
	// Changes still settling when the loop ends go to the queue: the
	// worker mines them during the shutdown grace.
	defer func() {
		for id, p := range pending {
			m.queue.add(id, p.first)
		}
	}()
	scanT := time.NewTimer(m.scanInterval())
	defer scanT.Stop()
	m.setNextScan(time.Now().Add(m.scanInterval()))
	dueT := time.NewTimer(time.Hour)
	dueT.Stop()
	defer dueT.Stop()
	reloadT := time.NewTimer(time.Hour)
	reloadT.Stop()
	defer reloadT.Stop()
	for {
		if next, ok := pending.next(); ok {
			dueT.Reset(max(time.Until(next), 0))
		} else {
			dueT.Stop()
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("manager: file watcher stopped")
			}
			if m.handleEvent(w, ev, pending) {
				reloadT.Reset(reloadDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("manager: file watcher stopped")
			}
			m.problem("watcher", err)
			m.log.Warn("file watcher error; scanning everything", "err", err)
			m.queue.addScan()
		case <-dueT.C:
			for id, first := range pending.takeDue(time.Now()) {
				m.queue.add(id, first)
			}
		case r := <-m.retryCh:
			pending.retryAt(r.agent, r.at)
		case <-scanT.C:
			m.watchAll(w) // re-arm watches lost to a deleted and recreated directory
			m.queue.addScan()
			iv := m.scanInterval()
			scanT.Reset(iv)
			m.setNextScan(time.Now().Add(iv))
		case <-m.reloadCh:
			m.reload()
			scanT.Reset(m.scanInterval())
			m.setNextScan(time.Now().Add(m.scanInterval()))
		case <-reloadT.C:
			m.reload()
		}
		m.mu.Lock()
		m.pendingN = len(pending)
		m.pendingSince = pending.oldest()
		m.mu.Unlock()
	}
}

func (m *Manager) scanInterval() time.Duration {
	if d := m.Config().Manager.ScanInterval.Duration; d > 0 {
		return d
	}
	return config.Default().Manager.ScanInterval.Duration
}

func (m *Manager) setNextScan(t time.Time) {
	m.mu.Lock()
	m.nextScan = t
	m.mu.Unlock()
}

// scan is the safety net: every agent's directory is mined, its memory
// file and its sessions (an unchanged file costs a hash), files of agents
// that vanished lose their drawers, and the archives are brought in step.
func (m *Manager) scan(ctx context.Context, stop <-chan struct{}) {
	if !m.Config().Manager.Mining {
		return
	}
	start := time.Now()
	seen := map[string]bool{}
	for _, dir := range m.agentDirs() {
		if stopped(stop) {
			return
		}
		id := filepath.Base(dir)
		seen[id] = true
		m.mineAgent(ctx, id, time.Time{}, true)
	}
	// Agents whose directory went: their files lose their drawers.
	if ids, err := m.app.IndexedAgents(ctx); err != nil {
		m.problem("scan", err)
	} else {
		for _, id := range ids {
			if !seen[id] && !stopped(stop) {
				seen[id] = true
				m.mineAgent(ctx, id, time.Time{}, true)
			}
		}
	}
	if stopped(stop) {
		return
	}
	if err := m.app.MineArchives(ctx); err != nil && ctx.Err() == nil {
		m.problem("scan archives", err)
		m.log.Warn("mining the archives failed; the next scan retries", "err", err)
	}
	m.mu.Lock()
	m.lastScan = time.Now().UTC()
	m.mu.Unlock()
	m.log.Debug("scan done", "agents", len(seen), "seconds", time.Since(start).Seconds())
}

// handleEvent routes one file system event and reports whether it asks
// for a config reload. Only these matter: config.toml in the home, agent
// directories appearing or going in hive/agents, memory.md and the
// sessions directory in an agent directory, and the session files (*.md)
// in it. Temp files of atomic saves (".memory.md.*.tmp"), lock files and
// editors' backups are other names and are ignored; an atomic save shows
// as a create of memory.md when its temp file is renamed over it. A change
// to memory.md or to one session file mines that file; a session file
// removed or renamed away, and any other change, mines the agent's whole
// directory (see Manager.whole), so that the files gone lose their
// drawers.
func (m *Manager) handleEvent(w *fsnotify.Watcher, ev fsnotify.Event, pending pendingSet) bool {
	h := m.home
	path := filepath.Clean(ev.Name)
	dir, name := filepath.Dir(path), filepath.Base(path)
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched directory itself went away (an agent's, or hive/agents
		// removed and made again): forget its watch, which a renamed
		// directory would keep, so the next scan sets one on whatever is
		// there then. The same goes for the watches below it (its
		// sessions directory), which a renamed directory takes along.
		m.mu.Lock()
		var gone []string
		for dir := range m.watched {
			if home.Under(dir, path) {
				gone = append(gone, dir)
				delete(m.watched, dir)
			}
		}
		m.mu.Unlock()
		for _, dir := range gone {
			_ = w.Remove(dir)
		}
	}
	switch {
	case dir == h.Root:
		return name == "config.toml"
	case dir == h.AgentsDir():
		if home.ValidateAgentID(name) != nil {
			return false
		}
		if ev.Has(fsnotify.Create) {
			// Watched before it is mined: the mine that follows sees
			// what was written before the watch.
			m.watchAgent(w, path)
		}
		m.mineWhole(name)
		pending.touch(name, time.Now(), m.Config().Manager.Debounce.Duration)
	case filepath.Dir(dir) == h.AgentsDir():
		id := filepath.Base(dir)
		if home.ValidateAgentID(id) != nil {
			return false
		}
		switch name {
		case "memory.md":
			m.log.Debug("memory file changed", "agent", id, "op", ev.Op.String())
			m.mineFile(id, path)
		case sessionsDir:
			if ev.Has(fsnotify.Create) {
				m.watchAgent(w, dir)
			}
			m.mineWhole(id)
		default:
			return false
		}
		pending.touch(id, time.Now(), m.Config().Manager.Debounce.Duration)
	default:
		id, ok := h.SessionFromPath(path)
		if !ok || strings.HasPrefix(name, ".") {
			return false
		}
		m.log.Debug("session file changed", "agent", id, "file", name, "op", ev.Op.String())
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			m.mineWhole(id)
		} else {
			m.mineFile(id, path)
		}
		pending.touch(id, time.Now(), m.Config().Manager.Debounce.Duration)
	}
	return false
}

// sessionsDir is the name of an agent's directory of imported
// conversations (home.SessionsDir).
const sessionsDir = "sessions"

// mineWhole makes the agent's next mine cover its whole directory.
func (m *Manager) mineWhole(id string) {
	m.mu.Lock()
	m.whole[id] = true
	m.mu.Unlock()
}

// mineFile makes the agent's next mine cover path, one of its files that
// changed (memory.md or a session file).
func (m *Manager) mineFile(id, path string) {
	m.mu.Lock()
	if m.files[id] == nil {
		m.files[id] = map[string]bool{}
	}
	m.files[id][path] = true
	m.mu.Unlock()
}

// takeMarks reports what the agent's mine is to cover, and clears the
// marks: its whole directory, or else the files that changed, sorted
// (none: its memory.md).
func (m *Manager) takeMarks(id string) (whole bool, files []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	whole = m.whole[id]
	if !whole {
		files = slices.Sorted(maps.Keys(m.files[id]))
	}
	delete(m.whole, id)
	delete(m.files, id)
	return whole, files
}

// watchAll watches the home (for config.toml), hive/agents (for new
// agents) and every agent directory with its sessions directory. Watching
// an already watched directory again is skipped.
func (m *Manager) watchAll(w *fsnotify.Watcher) {
	h := m.home
	m.addWatch(w, h.Root)
	m.addWatch(w, h.AgentsDir())
	for _, dir := range m.agentDirs() {
		m.watchAgent(w, dir)
	}
}

// watchAgent watches an agent directory and its sessions directory, when
// they are there.
func (m *Manager) watchAgent(w *fsnotify.Watcher, dir string) {
	for _, d := range []string{dir, filepath.Join(dir, sessionsDir)} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return
		}
		m.addWatch(w, d)
	}
}

func (m *Manager) addWatch(w *fsnotify.Watcher, dir string) {
	m.mu.Lock()
	done := m.watched[dir]
	m.mu.Unlock()
	if done {
		return
	}
	if err := w.Add(dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.problem("watch "+dir, err)
			m.log.Warn("cannot watch directory; the periodic scan covers it", "dir", dir, "err", err)
		}
		return
	}
	m.mu.Lock()
	m.watched[dir] = true
	m.mu.Unlock()
}

// agentDirs lists the directories in hive/agents whose names are valid
// agent ids, with or without a memory file yet.
func (m *Manager) agentDirs() []string {
	h := m.home
	ents, err := os.ReadDir(h.AgentsDir())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.problem("list agents", err)
		}
		return nil
	}
	var out []string
	for _, e := range ents {
		if home.IsDir(h.AgentsDir(), e) && home.ValidateAgentID(e.Name()) == nil {
			out = append(out, filepath.Join(h.AgentsDir(), e.Name()))
		}
	}
	return out
}
