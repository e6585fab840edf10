package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/home"
)

// SessionContextRequest asks for what a new session of an agent is told
// first (the SessionStart hook's added context).
type SessionContextRequest struct {
	Agent  string `json:"agent"`
	Budget int    `json:"budget,omitempty"` // estimated tokens of the digest; 0: search.wake_up_budget
	// BudgetGiven says Budget came from the caller: then 0 is refused,
	// as WakeUpRequest.BudgetGiven.
	BudgetGiven bool `json:"-"`
}

// Validate checks the agent id and the budget (as WakeUpRequest's).
func (r SessionContextRequest) Validate() error {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return invalid(err)
	}
	return r.wakeUp().Validate()
}

// wakeUp is the wake-up the context carries.
func (r SessionContextRequest) wakeUp() WakeUpRequest {
	return WakeUpRequest{Wing: r.Agent, Budget: r.Budget, BudgetGiven: r.BudgetGiven}
}

// SessionContext is the context a new session of the agent starts with:
// how to reach its memory, its wake-up digest and its newest sessions. An
// agent with no memory file yet is told so in plain words. A problem
// reading the memory (an unreadable or damaged file) is the error, for the
// caller to warn of, while the text — without it, for an agent is no
// reader of hivemem's internals — is still what the session gets.
func (a *App) SessionContext(ctx context.Context, r SessionContextRequest) (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	agent := r.Agent
	var b strings.Builder
	fmt.Fprintf(&b, "hivemem: long-term memory of agent %s (search it: hivemem search \"…\" --wing %s; add to it: hivemem remember %s \"…\").\n\n", agent, agent, agent)
	var problem error
	mem, _ := a.home.MemoryPath(agent)
	switch _, err := os.Stat(mem); {
	case errors.Is(err, fs.ErrNotExist):
		b.WriteString("Nothing remembered yet: this is the agent's first session with hivemem.\n")
	default:
		d, err := a.WakeUp(ctx, r.wakeUp())
		if err != nil {
			problem = fmt.Errorf("session context without the wake-up digest: %w", err)
			break
		}
		b.WriteString(d.Text)
	}
	if ss, err := capture.List(a.home, agent); err == nil && len(ss) > 0 {
		b.WriteString("\nRecent sessions:\n")
		for _, s := range ss[:min(3, len(ss))] {
			fmt.Fprintf(&b, "- %s — last: %s (%s)\n", s.Title, s.Last, a.home.Rel(s.Path))
		}
	}
	return b.String(), problem
}
