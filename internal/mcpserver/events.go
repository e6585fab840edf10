package mcpserver

import (
	"context"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/eventlog"
)

// ToolEvents lists the hive log.
const ToolEvents = "memory_events"

// MaxEvents caps one memory_events answer.
const MaxEvents = 500

// EventsInput is memory_events's arguments.
type EventsInput struct {
	N     *int   `json:"n,omitempty" jsonschema:"how many of the newest events, 1 to 500 (default 20)"`
	Agent string `json:"agent,omitempty" jsonschema:"only this agent's events"`
	Kind  string `json:"kind,omitempty" jsonschema:"only this kind: condense, condense-abort, restore, mine, or a harness's own (spawn, session, drain, ...)"`
}

// Event is one line of the hive log, whichever program wrote it: the
// same object (time, kind, agent, reason, data) as in GET /api/v1/events.
type Event = eventlog.Event

// EventsOutput is memory_events's result: the app's events result, the
// same object as GET /api/v1/events.
type EventsOutput = app.EventsResult

// events lists the newest events of the hive log, hivemem's and the
// harness's alike; under scope own, only the bound agent's.
func (s *server) events(ctx context.Context, in EventsInput) (EventsOutput, string, error) {
	n := 20
	if in.N != nil {
		n = *in.N // the app checks the range, 0 included
	}
	res, err := s.d.App.ListEvents(ctx, app.EventsRequest{EventFilter: app.EventFilter{Agent: in.Agent, Kind: in.Kind},
		N: n, MaxN: MaxEvents, Scope: s.scope()})
	if err != nil {
		return EventsOutput{}, "", err
	}
	return res, "", nil
}
