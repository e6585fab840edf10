package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
)

// maxEventWindow is how much of the end of the log a listing reads: the
// log only grows, and a listing wants the newest events.
const maxEventWindow = 8 << 20

// maxEventLine is the longest log line taken as an event; longer ones are
// skipped like any line that does not parse.
const maxEventLine = 1 << 20

// MaxEvents caps the events of one listing (a request's MaxN, when 0).
const MaxEvents = 10000

// EventItem is one event of the hive log (hivemem's or the harness's)
// with its position in the log, which a stream can resume from.
type EventItem struct {
	eventlog.Event
	// Offset is the byte offset just past the event's line.
	Offset int64 `json:"offset"`
}

// EventsResult is a listing of the newest events: the same object from
// GET /api/v1/events and MCP memory_events.
type EventsResult struct {
	Events []EventItem `json:"events" jsonschema:"oldest first"`
	// Offset is the end of the log when it was read: pass it to the
	// stream as "from" to get every later event and none twice.
	Offset int64 `json:"offset"`
	// Skipped counts the lines read that are not events (malformed JSON,
	// no kind): the log is shared, and such a line is passed over.
	Skipped int `json:"skipped" jsonschema:"lines of the log that are not events (malformed), passed over"`
}

// EventFilter selects events by agent and kind ("" for any).
type EventFilter struct {
	Agent string `json:"agent,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// KindParam names the parameter Kind came from, in errors ("" for
	// kind; the API also takes its older name, type).
	KindParam string `json:"-"`
}

var eventKindRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// Validate checks the filter; every error is ErrInvalid.
func (f EventFilter) Validate() error {
	if f.Agent != "" {
		if err := home.ValidateAgentID(f.Agent); err != nil {
			return badRequest("agent: %v", err)
		}
	}
	if f.Kind != "" && !eventKindRE.MatchString(f.Kind) {
		param := f.KindParam
		if param == "" {
			param = "kind"
		}
		return badRequest("%s %q: want an event kind such as condense, condense-abort, restore, mine, spawn", param, f.Kind)
	}
	return nil
}

func (f EventFilter) keep(ev eventlog.Event) bool {
	return (f.Agent == "" || ev.Agent == f.Agent) && (f.Kind == "" || ev.Kind == f.Kind)
}

// EventsRequest lists the newest events of the hive log.
type EventsRequest struct {
	EventFilter
	N int `json:"n,omitempty"` // how many, 1 to MaxN
	// MaxN caps N (0: MaxEvents). MCP lists at most 500.
	MaxN int `json:"-"`
	// Scope: under an own scope, only the caller's events.
	Scope Scope `json:"-"`
}

// Validate checks the request; every error is ErrInvalid.
func (r EventsRequest) Validate() error {
	maxN := r.MaxN
	if maxN <= 0 || maxN > MaxEvents {
		maxN = MaxEvents
	}
	if r.N < 1 || r.N > maxN {
		return badRequest("n %d: want a number of events from 1 to %d", r.N, maxN)
	}
	if r.Scope.Own && r.Agent != "" && r.Agent != r.Scope.Caller {
		return r.Scope.refuse("agent", r.Agent)
	}
	return r.EventFilter.Validate()
}

// ListEvents validates r and returns the newest N matching events from
// the end of the log, oldest first, and the log's end offset.
func (a *App) ListEvents(ctx context.Context, r EventsRequest) (EventsResult, error) {
	if err := r.Validate(); err != nil {
		return EventsResult{}, err
	}
	f := r.EventFilter
	if r.Scope.Own {
		f.Agent = r.Scope.Caller
	}
	path := a.home.LogPath()
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return EventsResult{Events: []EventItem{}}, nil
	}
	if err != nil {
		return EventsResult{}, fmt.Errorf("read events: %w", err)
	}
	start := max(0, st.Size()-maxEventWindow)
	if start > 0 {
		// Start at a line boundary: skip the partial line before it.
		fh, err := atomicio.OpenRegular(path)
		if err != nil {
			return EventsResult{}, fmt.Errorf("read events: %w", err)
		}
		b := make([]byte, 64<<10)
		k, _ := fh.ReadAt(b, start-1)
		fh.Close()
		if i := bytes.IndexByte(b[:k], '\n'); i >= 0 {
			start += int64(i)
		}
	}
	skipped := 0
	evs, end, err := a.EventsFrom(start, maxEventWindow, f, &skipped)
	if err != nil {
		return EventsResult{}, err
	}
	if len(evs) > r.N {
		evs = evs[len(evs)-r.N:]
	}
	if evs == nil {
		evs = []EventItem{}
	}
	return EventsResult{Events: evs, Offset: end, Skipped: skipped}, nil
}

// EventsFrom reads complete lines of the hive log from byte offset off
// (at most limit bytes) and returns the events f keeps and the offset
// after the last complete line: what an event stream tails. Lines that are
// not events (see eventlog.ParseLine) are skipped and counted in skipped,
// when it is not nil. A FIFO planted at the log is an error, not a hang.
func (a *App) EventsFrom(off, limit int64, f EventFilter, skipped *int) ([]EventItem, int64, error) {
	fh, err := atomicio.OpenRegular(a.home.LogPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, off, fmt.Errorf("read events: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, off, fmt.Errorf("read events: %w", err)
	}
	size := st.Size()
	if off > size {
		off = 0 // the log was truncated or replaced: start over
	}
	n := min(size-off, limit)
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, off, fmt.Errorf("read events: %w", err)
	}
	var out []EventItem
	pos := off
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			if int64(len(buf)) >= maxEventLine {
				pos += int64(len(buf)) // an endless line: skip what we have
			}
			break
		}
		line := buf[:i]
		buf = buf[i+1:]
		pos += int64(i + 1)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev eventlog.Event
		if len(line) <= maxEventLine {
			ev, err = eventlog.ParseLine(line)
		}
		if len(line) > maxEventLine || err != nil {
			if skipped != nil {
				*skipped++
			}
			continue
		}
		if f.keep(ev) {
			out = append(out, EventItem{Event: ev, Offset: pos})
		}
	}
	return out, pos, nil
}

// HookError logs a problem of an agent hook (`hivemem hook NAME`) as a
// hook-error event of the hive log.
func (a *App) HookError(hook, agent string, problem error) error {
	return appendHookError(a.events, hook, agent, problem)
}

// HomeHookError logs a hook's problem met before the app is open (hook
// input that does not parse, an invalid agent id, an unknown hook, a
// palace that does not open) in the log of the home dir names (--home,
// else $HIVEMEM_HOME, else the default), without opening the palace. A
// home that does not exist is not created: that is NoHome's error.
func HomeHookError(dir, hook, agent string, problem error) error {
	h, err := home.Resolve(dir)
	if err != nil {
		return err
	}
	if !h.Exists() {
		return NoHome(h)
	}
	return appendHookError(openEvents(h), hook, agent, problem)
}

// appendHookError is the hook-error event: an agent id that is not valid
// is kept in data.agent, not as the event's agent.
func appendHookError(l *eventlog.Log, hook, agent string, problem error) error {
	ev := eventlog.Event{Kind: "hook-error", Reason: problem.Error(), Data: map[string]any{"hook": hook}}
	switch {
	case home.ValidateAgentID(agent) == nil:
		ev.Agent = agent
	case agent != "":
		ev.Data["agent"] = agent
	}
	return l.Append(ev)
}

// openEvents is the home's event log (hive/log.jsonl), appended to under
// the home's symlink rule: a log that links out of the home is refused.
func openEvents(h home.Home) *eventlog.Log {
	return eventlog.Open(h.LogPath()).Within(func(p string) error {
		_, err := h.Contain(p)
		return err
	})
}
