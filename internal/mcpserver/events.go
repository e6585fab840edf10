package mcpserver

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
)

// ToolEvents lists the hive log.
const ToolEvents = "memory_events"

// MaxEvents caps one memory_events answer.
const MaxEvents = 500

// EventsInput is memory_events's arguments.
type EventsInput struct {
	N     int    `json:"n,omitempty" jsonschema:"how many of the newest events (default 20)"`
	Agent string `json:"agent,omitempty" jsonschema:"only this agent's events"`
	Kind  string `json:"kind,omitempty" jsonschema:"only this kind: condense, condense-abort, restore, mine, or a harness's own (spawn, session, drain, ...)"`
}

// Event is one line of the hive log, whichever program wrote it: the
// same object (time, kind, agent, reason, data) as in GET /api/v1/events.
type Event = eventlog.Event

// EventsOutput is memory_events's result.
type EventsOutput struct {
	Events  []Event `json:"events" jsonschema:"oldest first"`
	Skipped int     `json:"skipped" jsonschema:"lines of the log that are not events (malformed), passed over"`
}

var eventKindRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// events lists the newest events of the hive log, hivemem's and the
// harness's alike; under scope own, only the bound agent's.
func (s *server) events(_ context.Context, in EventsInput) (EventsOutput, string, error) {
	n := in.N
	if n == 0 {
		n = 20
	}
	if n < 1 || n > MaxEvents {
		return EventsOutput{}, "", fmt.Errorf("n %d: want 1 to %d", in.N, MaxEvents)
	}
	if in.Agent != "" {
		if err := home.ValidateAgentID(in.Agent); err != nil {
			return EventsOutput{}, "", fmt.Errorf("agent: %w", err)
		}
	}
	if in.Kind != "" && !eventKindRE.MatchString(in.Kind) {
		return EventsOutput{}, "", fmt.Errorf("kind %q: want an event kind such as condense, mine, spawn", in.Kind)
	}
	agent := in.Agent
	if s.d.Scope == ScopeOwn {
		if agent != "" && agent != s.d.Agent {
			return EventsOutput{}, "", fmt.Errorf("agent %q refused: this server reads only agent %q's memory", agent, s.d.Agent)
		}
		agent = s.d.Agent
	}
	out := EventsOutput{Events: []Event{}}
	if s.d.App.Events == nil {
		return out, "", nil
	}
	evs, skipped, err := s.d.App.Events.ReadCounted(n, func(ev eventlog.Event) bool {
		return (agent == "" || ev.Agent == agent) && (in.Kind == "" || ev.Kind == in.Kind)
	})
	if err != nil {
		return EventsOutput{}, "", fmt.Errorf("events: %w", err)
	}
	out.Skipped = skipped
	out.Events = append(out.Events, evs...)
	return out, "", nil
}
