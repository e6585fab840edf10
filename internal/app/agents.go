package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
)

// Backoff is an agent's mining failure record: after a failure the agent
// is retried at NextAttempt, and each further failure doubles the wait.
type Backoff struct {
	Failures    int       `json:"failures"`
	NextAttempt time.Time `json:"next_attempt"`
	LastError   string    `json:"last_error"`
	LastFailure time.Time `json:"last_failure"`
}

// AgentStatus is one agent's memory file, index and maintenance state.
type AgentStatus struct {
	Agent         string    `json:"agent"`
	Bytes         int64     `json:"bytes"`
	BudgetBytes   int64     `json:"budget_bytes"`
	BudgetPct     float64   `json:"budget_pct"`
	Sections      int       `json:"sections"`
	Pinned        int       `json:"pinned"`
	Drawers       int       `json:"drawers"`
	LastMined     time.Time `json:"last_mined,omitzero"`
	LastCondensed time.Time `json:"last_condensed,omitzero"`
	// Skipped says why the miner passed the file over (binary, too large,
	// unparseable, ...), as of the manager's last mine.
	Skipped string `json:"skipped,omitempty"`
	// MiningBackoff is set while mining the file keeps failing (manager
	// only: the CLI does not retry).
	MiningBackoff *Backoff `json:"mining_backoff,omitempty"`
	// ReflectorBackoff is set while condensations of the file keep
	// aborting (shared on disk by every process).
	ReflectorBackoff *ReflectorBackoff `json:"reflector_backoff,omitempty"`
	// Restored is set while the file is what a restore put back: passes
	// leave it alone until it changes or a condensation is forced.
	Restored *RestoredHold `json:"restored,omitempty"`
	// Condensed: the file has the three regions (pinned, condensed,
	// recent) of a condensed file.
	Condensed bool   `json:"condensed"`
	Error     string `json:"error,omitempty"`
	// Unparsed: Error is the file's parse error (it was read).
	Unparsed bool `json:"-"`
}

// collectAgents describes every agent of the home, the one computation of
// agent status behind `hivemem status`, the manager's status and MCP
// memory_status: file size against the budget
// in cfg, sections, pinned facts, drawers, last mine (from the index), last
// condensation (condensed, as from LastCondensed) and reflector backoff
// (from its state file). An agent whose file cannot be read or parsed gets
// an Error, not a failure of the whole report.
func (a *App) collectAgents(ctx context.Context, cfg config.Config, st store.Stats, condensed map[string]time.Time) ([]AgentStatus, error) {
	ids, err := a.home.Agents()
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	wingDrawers := map[string]int{}
	for _, w := range st.Wings {
		wingDrawers[w.Wing] = w.Drawers
	}
	states := a.reflector.States()
	out := make([]AgentStatus, 0, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, a.agentStatus(ctx, cfg, id, wingDrawers[id], states[id], condensed[id], a.home.ReadFile))
	}
	return out, nil
}

// CollectAgent is collectAgents for the one agent id (a valid id), whose
// memory file the caller has read (ReadMemory): it describes data rather
// than reading the file again.
func (a *App) CollectAgent(ctx context.Context, cfg config.Config, id string, data []byte, condensed map[string]time.Time) (AgentStatus, error) {
	st, err := a.store.Stats(ctx)
	if err != nil {
		return AgentStatus{}, fmt.Errorf("index stats: %w", err)
	}
	drawers := 0
	for _, w := range st.Wings {
		if w.Wing == id {
			drawers = w.Drawers
		}
	}
	read := func(string) ([]byte, error) { return data, nil }
	return a.agentStatus(ctx, cfg, id, drawers, a.reflector.States()[id], condensed[id], read), nil
}

// agentStatus describes one agent from its file (as read gives it), its
// index entry and the reflector's state of it.
func (a *App) agentStatus(ctx context.Context, cfg config.Config, id string, drawers int, state reflector.AgentState, condensed time.Time, read func(path string) ([]byte, error)) AgentStatus {
	as := AgentStatus{Agent: id, Drawers: drawers, BudgetBytes: cfg.Reflector.BudgetBytes, LastCondensed: condensed}
	if state.Failures > 0 {
		as.ReflectorBackoff = reflectorBackoffOf(state)
	}
	path, err := a.home.MemoryPath(id)
	if err != nil {
		as.Error = err.Error()
		return as
	}
	if f, err := a.store.GetFile(ctx, a.home.Rel(path)); err == nil {
		as.LastMined = f.MinedAt
	}
	data, err := read(path) // Home.ReadFile: symlinks stay in the home; never blocks on a FIFO
	if err != nil {
		as.Error = err.Error()
		return as
	}
	as.Bytes = int64(len(data))
	if reflector.HeldBy(state.Restored, data) {
		as.Restored = restoredHoldOf(state.Restored)
	}
	if as.BudgetBytes > 0 {
		as.BudgetPct = 100 * float64(as.Bytes) / float64(as.BudgetBytes)
	}
	if mf, err := memfile.Parse(data); err != nil {
		as.Error, as.Unparsed = err.Error(), true
	} else {
		as.Sections, as.Pinned, as.Condensed = len(mf.Recent()), len(mf.Pinned()), mf.HasRegions()
	}
	return as
}

// LastCondensed returns the time of each agent's newest condense event in
// the event log at path. A log that cannot be read gives an empty map: it
// is a record, not a source of truth.
func LastCondensed(path string) map[string]time.Time {
	var c CondensedIndex
	return c.Read(path)
}

// CondensedIndex follows the event log for condense events, reading only
// what was appended since its last look (the manager asks on every status
// request; the log only grows, except when someone truncates it).
type CondensedIndex struct {
	mu   sync.Mutex
	off  int64
	last map[string]time.Time
}

func (c *CondensedIndex) Read(path string) map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]time.Time{}
	}
	f, err := atomicio.OpenRegular(path) // a FIFO planted at the log must not hang a status
	if err != nil {
		return maps.Clone(c.last)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < c.off {
		c.off, c.last = 0, map[string]time.Time{} // truncated or replaced: start over
	}
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return maps.Clone(c.last)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF, or a line still being written: read it next time
		}
		c.off += int64(len(line))
		ev, err := eventlog.ParseLine(line)
		if err != nil || ev.Kind != "condense" {
			continue
		}
		if ev.Time.After(c.last[ev.Agent]) {
			c.last[ev.Agent] = ev.Time
		}
	}
	return maps.Clone(c.last)
}
