// Package eventlog appends and reads hive/log.jsonl, the record of what
// hivemem did to the hive (mine, condense, condense-abort, restore, ...).
//
// The file is shared with the agent harness hivemem serves, so every line
// hivemem writes has the harness's form: one JSON object with "ts"
// (milliseconds since the epoch), "kind" and "agentId", the event's other
// fields beside them ({"ts":1764600000000,"kind":"condense","agentId":"a",
// "oldBytes":...}). Reading takes every line either program writes, and
// hivemem's older form {"time","type","agent","reason","data"} too.
package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Event is one line of the log. Fields beyond the common ones go in Data.
// Its JSON form — the same in `--json` output, the HTTP API and MCP —
// names them time (RFC 3339), kind, agent, reason and data; the log
// line's form is MarshalLine's (ts, kind, agentId).
type Event struct {
	Time   time.Time      `json:"time"`
	Kind   string         `json:"kind"` // condense, mine, restore, or a harness's own
	Agent  string         `json:"agent,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Data   map[string]any `json:"data,omitempty" jsonschema:"the event's other fields, as written"`
}

// oldLine is hivemem's older log line form.
type oldLine struct {
	Time   time.Time      `json:"time"`
	Kind   string         `json:"type"` // the older name of kind
	Agent  string         `json:"agent,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
}

// Log appends events to one file. Each event is written with a single
// O_APPEND write so lines from several processes never interleave.
type Log struct {
	path string
	mu   sync.Mutex
	subs map[chan Event]struct{}
	// check, when set, vets the path before each append (Within).
	check func(path string) error
}

// Open returns a log writing to path (created on first append).
func Open(path string) *Log { return &Log{path: path, subs: map[chan Event]struct{}{}} }

// Within makes every append first pass check on the log's path (the
// home's symlink rule: a log.jsonl, or a hive directory, that links out of
// the home is refused, not written through), and returns l.
func (l *Log) Within(check func(path string) error) *Log {
	l.check = check
	return l
}

// Path is the file the log writes to.
func (l *Log) Path() string { return l.path }

// Append writes ev, stamping the time when it is zero, and notifies subscribers.
func (l *Log) Append(ev Event) error {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	ev.Time = ev.Time.Truncate(time.Millisecond) // what the line keeps
	line, err := MarshalLine(ev)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.Kind, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.check != nil {
		if err := l.check(l.path); err != nil {
			return fmt.Errorf("append event: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	_, werr := f.Write(line)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("append event to %s: %w", l.path, err)
	}
	for ch := range l.subs {
		select {
		case ch <- ev:
		default: // a slow subscriber misses events rather than blocking writers
		}
	}
	return nil
}

// Subscribe returns a channel of events appended through this Log from now
// on, and a function that ends the subscription.
func (l *Log) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 64)
	l.mu.Lock()
	l.subs[ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs, ch)
		l.mu.Unlock()
	}
}

// Read returns the last n events (all when n <= 0) that match keep (all
// when keep is nil), oldest first. Lines that do not parse are skipped: the
// log is a record, not a source of truth.
func (l *Log) Read(n int, keep func(Event) bool) ([]Event, error) {
	evs, _, err := l.ReadCounted(n, keep)
	return evs, err
}

// ReadCounted is Read that also counts the lines it skipped because they
// are not events (malformed JSON, no kind or type).
func (l *Log) ReadCounted(n int, keep func(Event) bool) ([]Event, int, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read events: %w", err)
	}
	defer f.Close()
	var out []Event
	skipped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		ev, err := ParseLine(sc.Bytes())
		if err != nil {
			skipped++
			continue
		}
		if keep != nil && !keep(ev) {
			continue
		}
		out = append(out, ev)
		if n > 0 && len(out) > 2*n {
			out = append(out[:0], out[len(out)-n:]...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("read events %s: %w", l.path, err)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out, skipped, nil
}

// The keys of a log line that are not the event's Data.
const (
	keyTS     = "ts"
	keyKind   = "kind"
	keyAgent  = "agentId"
	keyReason = "reason"
)

// MarshalLine encodes ev as one line of the shared log (without the
// newline): "ts", "kind", "agentId" (always present, "" for an event of
// the whole hive), "reason" when set, then Data's fields in key order. A
// Data field named like one of those is left out.
func MarshalLine(ev Event) ([]byte, error) {
	if ev.Kind == "" {
		return nil, errors.New("encode event: no kind")
	}
	var b bytes.Buffer
	field := func(k string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode event %s field %s: %w", ev.Kind, k, err)
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		kr, _ := json.Marshal(k)
		b.Write(kr)
		b.WriteByte(':')
		b.Write(raw)
		return nil
	}
	if err := errors.Join(field(keyTS, ev.Time.UnixMilli()), field(keyKind, ev.Kind), field(keyAgent, ev.Agent)); err != nil {
		return nil, err
	}
	if ev.Reason != "" {
		if err := field(keyReason, ev.Reason); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(ev.Data))
	for k := range ev.Data {
		switch k {
		case keyTS, keyKind, keyAgent, keyReason:
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := field(k, ev.Data[k]); err != nil {
			return nil, err
		}
	}
	return append(append([]byte{'{'}, b.Bytes()...), '}'), nil
}

// ErrNotEvent is the error of ParseLine for a line that is not an event.
var ErrNotEvent = errors.New("not an event")

// ParseLine decodes one line of the log as either program writes it: the
// harness's {"ts","kind","agentId",...} (every other field in Data; "ts"
// in milliseconds since the epoch, or an RFC 3339 string) or hivemem's
// older {"time","type","agent","reason","data"}. Anything else (not a JSON
// object, no kind or type) is an error wrapping ErrNotEvent.
func ParseLine(line []byte) (Event, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil || m == nil {
		return Event{}, fmt.Errorf("%w: not a JSON object", ErrNotEvent)
	}
	if _, ok := m[keyKind]; !ok {
		if _, ok := m["type"]; !ok {
			return Event{}, fmt.Errorf("%w: no kind", ErrNotEvent)
		}
		var old oldLine
		if err := json.Unmarshal(line, &old); err != nil || old.Kind == "" {
			return Event{}, fmt.Errorf("%w: bad type, time, agent or data", ErrNotEvent)
		}
		return Event(old), nil
	}
	var ev Event
	if json.Unmarshal(m[keyKind], &ev.Kind) != nil || ev.Kind == "" {
		return Event{}, fmt.Errorf("%w: kind is not a string", ErrNotEvent)
	}
	if raw, ok := m[keyAgent]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &ev.Agent) != nil {
			return Event{}, fmt.Errorf("%w: agentId is not a string", ErrNotEvent)
		}
	}
	delete(m, keyKind)
	delete(m, keyAgent)
	if raw, ok := m[keyTS]; ok {
		t, ok := parseTS(raw)
		if !ok {
			return Event{}, fmt.Errorf("%w: ts is not a time", ErrNotEvent)
		}
		ev.Time = t
		delete(m, keyTS)
	}
	if raw, ok := m[keyReason]; ok && json.Unmarshal(raw, &ev.Reason) == nil {
		delete(m, keyReason)
	}
	for k, raw := range m {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if ev.Data == nil {
			ev.Data = make(map[string]any, len(m))
		}
		ev.Data[k] = v
	}
	return ev, nil
}

// parseTS reads a "ts": milliseconds since the epoch, or an RFC 3339 string.
func parseTS(raw json.RawMessage) (time.Time, bool) {
	var ms float64
	if json.Unmarshal(raw, &ms) == nil {
		if math.IsNaN(ms) || math.Abs(ms) > 1e15 {
			return time.Time{}, false
		}
		return time.UnixMilli(int64(ms)).UTC(), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
