package reflector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hivemem/hivemem/internal/backoff"
	"os"
	"path/filepath"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// StateFile is the name of the backoff state file in the palace directory.
// It lives on disk, not in memory, so that repeated `hivemem reflect` runs
// and the long-running manager all honour the same backoff.
const StateFile = "reflector-state.json"

// Backoff bounds: the first retry after a failure waits BackoffMin, each
// further failure doubles the wait, up to BackoffMax. A file that cannot be
// condensed is retried a few times an hour at first and then four times a
// day, instead of forever on every scan.
const (
	BackoffMin = time.Minute
	BackoffMax = 6 * time.Hour
)

// AgentState is the failure record of one agent. The zero value means "no
// recent failure": the agent is due whenever its triggers fire.
type AgentState struct {
	Failures    int       `json:"failures"`
	NextAttempt time.Time `json:"next_attempt"`
	LastReason  string    `json:"last_reason,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	LastFailure time.Time `json:"last_failure"`
	// Restored is set by Restore: the file is left alone by automatic
	// condensation while it still holds exactly what was restored.
	Restored *RestoredHold `json:"restored,omitempty"`
}

// RestoredHold records a restore: which backup was put back, when, and
// the size and hash of the file it left. Automatic passes skip the agent
// (SkipRestored) until the file differs from that (an agent wrote to it, a
// user edited it) or someone condenses it on purpose (`reflect --now`, the
// dashboard's condense), which clears the hold.
type RestoredHold struct {
	Backup string    `json:"backup"`
	At     time.Time `json:"at"`
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"`
}

// HeldBy reports whether data is still the file hold recorded, i.e.
// whether automatic condensation still leaves it alone.
func HeldBy(hold *RestoredHold, data []byte) bool { return hold.holds(data) }

// holds reports whether data is still the restored file.
func (h *RestoredHold) holds(data []byte) bool {
	return h != nil && int64(len(data)) == h.Size && fileHash(data) == h.SHA256
}

func fileHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// empty reports a record with nothing to keep.
func (s AgentState) empty() bool { return s.Failures == 0 && s.Restored == nil }

// Due reports whether an automatic attempt may run at now.
func (s AgentState) Due(now time.Time) bool {
	return s.Failures == 0 || !now.Before(s.NextAttempt)
}

// Backoff returns the wait after the given number of consecutive failures:
// 1 min, 2 min, 4 min, ... capped at 6 h. Zero failures wait nothing.
func Backoff(failures int) time.Duration {
	return backoff.Doubling(BackoffMin, BackoffMax, failures)
}

// stateDoc is the on-disk form of the state file.
type stateDoc struct {
	Version int                   `json:"version"`
	Agents  map[string]AgentState `json:"agents"`
}

func (r *Reflector) statePath() string {
	return filepath.Join(r.home.PalaceDir(), StateFile)
}

// loadState reads the state file. A missing file is an empty state; a
// corrupt one is logged and treated as empty, because it only holds
// backoff timers and must never stop condensation for good.
func (r *Reflector) loadState() map[string]AgentState {
	data, err := os.ReadFile(r.statePath())
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.log.Warn("reflector: cannot read backoff state; ignoring it", "path", r.statePath(), "err", err)
		}
		return map[string]AgentState{}
	}
	return r.decodeState(data)
}

func (r *Reflector) decodeState(data []byte) map[string]AgentState {
	var doc stateDoc
	if len(data) > 0 {
		if err := json.Unmarshal(data, &doc); err != nil {
			r.log.Warn("reflector: backoff state is corrupt; starting afresh", "path", r.statePath(), "err", err)
		}
	}
	if doc.Agents == nil {
		doc.Agents = map[string]AgentState{}
	}
	return doc.Agents
}

// State returns the backoff record of agent (the zero value if it has
// none).
func (r *Reflector) State(agent string) AgentState {
	return r.loadState()[agent]
}

// States returns the backoff records of every agent that has one, for
// status pages.
func (r *Reflector) States() map[string]AgentState {
	return r.loadState()
}

// Due reports whether an automatic condensation of agent may run now, with
// the record that decided it (NextAttempt says when, if not).
func (r *Reflector) Due(agent string) (bool, AgentState) {
	st := r.State(agent)
	return st.Due(r.now()), st
}

// updateState applies fn to agent's record under the state file's lock and
// writes it back atomically, dropping records that are back to zero.
func (r *Reflector) updateState(ctx context.Context, agent string, fn func(*AgentState)) (AgentState, error) {
	if err := r.home.MkdirAll(r.home.PalaceDir()); err != nil {
		return AgentState{}, fmt.Errorf("reflector: state: %w", err)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.lockTimeout)
	defer cancel()
	var out AgentState
	err := atomicio.Update(lctx, r.statePath(), 0o644, func(old []byte) ([]byte, error) {
		agents := r.decodeState(old)
		st := agents[agent]
		fn(&st)
		out = st
		if st.empty() {
			delete(agents, agent)
		} else {
			agents[agent] = st
		}
		data, err := json.MarshalIndent(stateDoc{Version: 1, Agents: agents}, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode state: %w", err)
		}
		return append(data, '\n'), nil
	})
	if err != nil {
		return out, fmt.Errorf("reflector: update backoff state: %w", err)
	}
	return out, nil
}

// setRestored records (hold != nil) or clears a restore hold.
func (r *Reflector) setRestored(ctx context.Context, agent string, hold *RestoredHold) {
	if _, err := r.updateState(ctx, agent, func(s *AgentState) { s.Restored = hold }); err != nil {
		r.log.Warn("reflector: cannot record the restore hold", "agent", agent, "err", err)
	}
}

// recordFailure counts one more failure and schedules the next attempt.
func (r *Reflector) recordFailure(ctx context.Context, agent, reason, msg string) AgentState {
	now := r.now()
	st, err := r.updateState(ctx, agent, func(s *AgentState) {
		s.Failures++
		s.LastReason, s.LastError, s.LastFailure = reason, msg, now
		s.NextAttempt = now.Add(Backoff(s.Failures))
	})
	if err != nil {
		r.log.Warn("reflector: cannot record failure", "agent", agent, "err", err)
	}
	return st
}

// recordSuccess clears the agent's backoff and restore hold.
func (r *Reflector) recordSuccess(ctx context.Context, agent string) {
	if r.State(agent).empty() {
		return // nothing to clear; skip the locked write
	}
	if _, err := r.updateState(ctx, agent, func(s *AgentState) { *s = AgentState{} }); err != nil {
		r.log.Warn("reflector: cannot clear backoff", "agent", agent, "err", err)
	}
}
