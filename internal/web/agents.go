package web

import (
	"context"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
)

// Health levels of an agent's memory file, worst last.
const (
	HealthOK   = "ok"   // well under the triggers
	HealthNear = "near" // at 80 % or more of a trigger
	HealthDue  = "due"  // over a trigger: the next pass condenses it
	// HealthRestored: restored from a backup and unchanged since; passes
	// leave it alone (condense now still condenses it).
	HealthRestored = "restored"
	HealthBackoff  = "backoff" // condensation failed recently; retried later
	HealthError    = "error"   // the file cannot be read or parsed
)

// AgentSummary is one agent's status (app.AgentStatus, under its names)
// graded against the reflector's triggers for the dashboard.
type AgentSummary struct {
	app.AgentStatus
	TriggerBytes   int64  `json:"trigger_bytes"` // condensation starts above this size
	SectionTrigger int    `json:"section_trigger"`
	Backups        int    `json:"backups"`
	Health         string `json:"health"`
	HealthNote     string `json:"health_note"`
}

// summaryContext is what the dashboard adds to the app's agent status,
// gathered once per request.
type summaryContext struct {
	cfg     config.Config
	backups map[string]int
	manager map[string]app.AgentStatus // the manager's view of each agent
	now     time.Time
}

func (h *Handler) newSummaryContext(ctx context.Context, ms *app.ManagerStatus) (summaryContext, error) {
	sc := summaryContext{cfg: h.cfg(), backups: map[string]int{}, now: time.Now()}
	bs, err := h.app.Backups(ctx, app.BackupsRequest{})
	if err != nil {
		return sc, err
	}
	for _, b := range bs {
		sc.backups[b.Agent]++
	}
	if ms != nil {
		sc.manager = make(map[string]app.AgentStatus, len(ms.Agents))
		for _, as := range ms.Agents {
			sc.manager[as.Agent] = as
		}
	}
	return sc, nil
}

// agentSummaries grades every agent of an app status (app.Status's
// Agents, computed once per request).
func (h *Handler) agentSummaries(ctx context.Context, agents []app.AgentStatus, ms *app.ManagerStatus) ([]AgentSummary, error) {
	sc, err := h.newSummaryContext(ctx, ms)
	if err != nil {
		return nil, err
	}
	out := make([]AgentSummary, 0, len(agents))
	for _, as := range agents {
		out = append(out, sc.summarize(as))
	}
	return out, nil
}

// agentSummary is one agent's summary (a valid id), from its memory file
// as agentFile read it (data: not read again).
func (h *Handler) agentSummary(ctx context.Context, id string, data []byte) (AgentSummary, error) {
	sc, err := h.newSummaryContext(ctx, h.managerStatus(ctx))
	if err != nil {
		return AgentSummary{}, err
	}
	as, err := h.app.CollectAgent(ctx, sc.cfg, id, data, h.lastCondensed())
	if err != nil {
		return AgentSummary{}, err
	}
	return sc.summarize(as), nil
}

// summarize grades one agent's status, with the manager's view of it.
func (sc summaryContext) summarize(as app.AgentStatus) AgentSummary {
	rc := sc.cfg.Reflector
	s := AgentSummary{
		AgentStatus: as, SectionTrigger: rc.SectionTrigger,
		TriggerBytes: rc.BudgetBytes * int64(rc.ByteTriggerPct) / 100,
		Backups:      sc.backups[as.Agent], Health: HealthOK,
	}
	if m, ok := sc.manager[as.Agent]; ok {
		s.Skipped = m.Skipped
		if m.MiningBackoff != nil && m.MiningBackoff.Failures > 0 {
			s.MiningBackoff = m.MiningBackoff
		}
	}
	switch {
	case as.Error != "" && as.Unparsed:
		s.Health, s.HealthNote = HealthError, "the memory file does not parse"
	case as.Error != "":
		s.Health, s.HealthNote = HealthError, "cannot read the memory file"
	default:
		s.Health, s.HealthNote = health(rc, s, sc.now)
	}
	return s
}

// health grades a parsed file: backoff first (a failing agent needs a
// look), then the triggers.
func health(rc config.Reflector, s AgentSummary, now time.Time) (string, string) {
	if b := s.MiningBackoff; b != nil {
		return HealthBackoff, fmt.Sprintf("mining failed %d time(s): %s", b.Failures, b.LastError)
	}
	if s.Skipped != "" {
		return HealthError, "not indexed: " + s.Skipped
	}
	if b := s.ReflectorBackoff; b != nil {
		note := fmt.Sprintf("%d failed condensation(s), last: %s", b.Failures, b.LastReason)
		if now.Before(b.NextAttempt) {
			note += "; next attempt " + b.NextAttempt.UTC().Format("2006-01-02 15:04Z")
		}
		return HealthBackoff, note
	}
	if r := s.Restored; r != nil {
		return HealthRestored, fmt.Sprintf("restored from backup %s at %s: left alone until the file changes (condense now condenses it)",
			r.Backup, r.At.UTC().Format("2006-01-02 15:04Z"))
	}
	disabled := ""
	if !rc.Enabled {
		disabled = " (reflector disabled)"
	}
	if app.CondenseDue(rc, s.Bytes, s.Sections) {
		switch {
		case s.Bytes > rc.BudgetBytes:
			return HealthDue, fmt.Sprintf("over budget: %s of %s%s", humanize.IBytes(uint64(s.Bytes)), humanize.IBytes(uint64(rc.BudgetBytes)), disabled)
		case s.TriggerBytes > 0 && s.Bytes > s.TriggerBytes:
			return HealthDue, fmt.Sprintf("over the %d%% trigger: due for condensation%s", rc.ByteTriggerPct, disabled)
		}
		return HealthDue, fmt.Sprintf("%d sections, over the trigger of %d: due for condensation%s", s.Sections, rc.SectionTrigger, disabled)
	}
	near := s.TriggerBytes > 0 && s.Bytes*10 >= s.TriggerBytes*8 ||
		rc.SectionTrigger > 0 && s.Sections*10 >= rc.SectionTrigger*8
	if near && s.Bytes >= rc.MinBytes {
		return HealthNear, "approaching the condensation trigger"
	}
	return HealthOK, "within budget"
}

// agentFile reads an agent's memory file for a request (app.ReadMemory):
// 400 for a bad id, 404 when the agent has no memory file.
func (h *Handler) agentFile(ctx context.Context, id string) (path string, data []byte, err error) {
	m, err := h.app.ReadMemory(ctx, app.MemoryRequest{Agent: id})
	if err != nil {
		return "", nil, appError(err)
	}
	return m.Path, m.Data, nil
}

// agentMemory reads an agent's memory file for a request, parsed into its
// regions (app.Memory): 400 for a bad id, 404 when the agent has no memory
// file (statusOf).
func (h *Handler) agentMemory(ctx context.Context, id string) (MemoryView, error) {
	return h.app.Memory(ctx, app.MemoryRequest{Agent: id})
}

// MemoryView is an agent's memory file, raw and parsed into its regions:
// the app's one region model (app.Memory), the same as MCP memory_read's.
type MemoryView = app.Memory

// SectionView is one "## " section. Kind is the memfile kind (section,
// pinned, condensed, recent); Region is where it stands: pinned,
// condensed, or recent (the marker and every ordinary section).
type SectionView = app.MemorySection
