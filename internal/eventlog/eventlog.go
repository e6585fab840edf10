// Package eventlog appends and reads hive/log.jsonl, the record of what
// hivemem did to the hive (mine, condense, condense-abort, restore, ...).
package eventlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event is one line of the log. Fields beyond the common ones go in Data.
type Event struct {
	Time   time.Time      `json:"time"`
	Type   string         `json:"type"`
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
}

// Open returns a log writing to path (created on first append).
func Open(path string) *Log { return &Log{path: path, subs: map[chan Event]struct{}{}} }

// Path is the file the log writes to.
func (l *Log) Path() string { return l.path }

// Append writes ev, stamping the time when it is zero, and notifies subscribers.
func (l *Log) Append(ev Event) error {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.Type, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
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
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
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
		return nil, fmt.Errorf("read events %s: %w", l.path, err)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}
