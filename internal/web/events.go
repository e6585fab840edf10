package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

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

// EventItem is one logged event with its position in the log, which a
// stream can resume from.
type EventItem struct {
	eventlog.Event
	// Offset is the byte offset just past the event's line.
	Offset int64 `json:"offset"`
}

// EventsResponse is GET /api/v1/events.
type EventsResponse struct {
	Events []EventItem `json:"events"`
	// Offset is the end of the log when it was read: pass it to the
	// stream as "from" to get every later event and none twice.
	Offset int64 `json:"offset"`
	// Skipped counts the lines read that are not events (malformed JSON,
	// no kind): the log is shared, and such a line is passed over.
	Skipped int `json:"skipped"`
}

// eventFilter selects events by agent and kind.
type eventFilter struct{ agent, typ string }

var eventTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

func parseEventFilter(r *http.Request) (eventFilter, error) {
	q := r.URL.Query()
	// kind names the event's kind, as in the events themselves and in
	// MCP; type is its older name, still taken.
	param := "kind"
	f := eventFilter{agent: q.Get("agent"), typ: q.Get("kind")}
	if f.typ == "" && q.Has("type") {
		param, f.typ = "type", q.Get("type")
	}
	if f.agent != "" {
		if err := home.ValidateAgentID(f.agent); err != nil {
			return f, errBadRequest("agent: %v", err)
		}
	}
	if f.typ != "" && !eventTypeRE.MatchString(f.typ) {
		return f, errBadRequest("%s %q: want an event kind such as condense, condense-abort, restore, mine", param, f.typ)
	}
	return f, nil
}

func (f eventFilter) keep(ev eventlog.Event) bool {
	return (f.agent == "" || ev.Agent == f.agent) && (f.typ == "" || ev.Kind == f.typ)
}

// readEvents reads complete lines of the log from off (at most limit
// bytes) and returns the matching events and the offset after the last
// complete line. Lines that are not events (see eventlog.ParseLine) are
// skipped and counted in skipped, when it is not nil.
func readEvents(path string, off, limit int64, f eventFilter, skipped *int) ([]EventItem, int64, error) {
	fh, err := atomicio.OpenRegular(path) // a FIFO planted at the log must not hang the request
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

// listEvents returns the newest n matching events from the end of the log,
// oldest first, and the log's end offset.
func (h *Handler) listEvents(n int, f eventFilter) (EventsResponse, error) {
	path := h.app.Home.LogPath()
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return EventsResponse{Events: []EventItem{}}, nil
	}
	if err != nil {
		return EventsResponse{}, fmt.Errorf("read events: %w", err)
	}
	start := max(0, st.Size()-maxEventWindow)
	if start > 0 {
		// Start at a line boundary: skip the partial line before it.
		fh, err := atomicio.OpenRegular(path)
		if err != nil {
			return EventsResponse{}, fmt.Errorf("read events: %w", err)
		}
		b := make([]byte, 64<<10)
		k, _ := fh.ReadAt(b, start-1)
		fh.Close()
		if i := bytes.IndexByte(b[:k], '\n'); i >= 0 {
			start += int64(i)
		}
	}
	skipped := 0
	evs, end, err := readEvents(path, start, maxEventWindow, f, &skipped)
	if err != nil {
		return EventsResponse{}, err
	}
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	if evs == nil {
		evs = []EventItem{}
	}
	return EventsResponse{Events: evs, Offset: end, Skipped: skipped}, nil
}

func (h *Handler) apiEvents(w http.ResponseWriter, r *http.Request) error {
	f, err := parseEventFilter(r)
	if err != nil {
		return err
	}
	n := 100
	if s := r.URL.Query().Get("n"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 10000 {
			return errBadRequest("n %q: want a number of events from 1 to 10000", s)
		}
		n = v
	}
	resp, err := h.listEvents(n, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// sseHeartbeat keeps idle streams (and the proxies between) alive.
const sseHeartbeat = 15 * time.Second

// apiEventStream streams events as server-sent events. It tails the log
// file, so it sees events written by every process (the manager, CLI runs),
// and wakes at once for events appended through this process's log. Each
// event's id is its end offset in the log, so a reconnecting EventSource
// (Last-Event-ID) resumes without losing or repeating one. Without an id
// or "from" it starts at the end of the log. HEAD gets the headers only.
// The stream ends when the client goes away, or on Close.
func (h *Handler) apiEventStream(w http.ResponseWriter, r *http.Request) {
	f, err := parseEventFilter(r)
	if err != nil {
		writeJSON(w, statusOf(err), apiError{Error: err.Error()})
		return
	}
	path := h.app.Home.LogPath()
	var off int64 = -1
	for _, s := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("from")} {
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("event offset %q: want a byte offset from /api/v1/events", s)})
			return
		}
		off = v
		break
	}
	if off < 0 {
		off = 0
		if st, err := os.Stat(path); err == nil {
			off = st.Size()
		}
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodHead {
		// The headers are the whole answer: a HEAD response has no body,
		// so the writes of a stream would be discarded and never fail, and
		// the stream would hold the connection for good.
		w.WriteHeader(http.StatusOK)
		return
	}
	rc := http.NewResponseController(w)
	// A server-wide write timeout must not cut a stream that is meant to
	// stay open; an error here only means the server has none.
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, "retry: 3000\n: hivemem event stream\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		h.log.Warn("web: event stream cannot flush", "err", err)
		return
	}

	var notify <-chan eventlog.Event
	if h.app.Events != nil {
		ch, cancel := h.app.Events.Subscribe()
		defer cancel()
		notify = ch
	}
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		for {
			evs, next, err := readEvents(path, off, 1<<20, f, nil)
			if err != nil {
				h.log.Warn("web: event stream", "err", err)
				break
			}
			for _, ev := range evs {
				data, err := json.Marshal(ev)
				if err != nil {
					continue
				}
				if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Offset, data); err != nil {
					return
				}
			}
			moved := next != off
			off = next
			if len(evs) > 0 {
				if err := rc.Flush(); err != nil {
					return
				}
			}
			if !moved {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-h.done:
			return
		case <-notify:
		case <-tick.C:
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}
