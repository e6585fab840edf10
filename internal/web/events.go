package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/hivemem/hivemem/internal/app"
)

// EventItem is one logged event with its position in the log.
type EventItem = app.EventItem

// EventsResponse is GET /api/v1/events: the app's events result, the same
// object as MCP memory_events.
type EventsResponse = app.EventsResult

// parseEventFilter reads the agent and kind parameters (the app
// validates them).
func parseEventFilter(r *http.Request) app.EventFilter {
	q := r.URL.Query()
	// kind names the event's kind, as in the events themselves and in
	// MCP; type is its older name, still taken.
	f := app.EventFilter{Agent: q.Get("agent"), Kind: q.Get("kind")}
	if f.Kind == "" && q.Has("type") {
		f.Kind, f.KindParam = q.Get("type"), "type"
	}
	return f
}

func (h *Handler) apiEvents(w http.ResponseWriter, r *http.Request) error {
	req := app.EventsRequest{EventFilter: parseEventFilter(r), N: 100}
	if s := r.URL.Query().Get("n"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			return errBadRequest("n %q: want a number of events from 1 to %d", s, app.MaxEvents)
		}
		req.N = v
	}
	res, err := h.app.ListEvents(r.Context(), req)
	return answer(w, res, err)
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
	f := parseEventFilter(r)
	if err := f.Validate(); err != nil {
		err = appError(err)
		writeJSON(w, statusOf(err), apiError{Error: err.Error()})
		return
	}
	path := h.app.Home().LogPath()
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

	notify, cancel := h.app.SubscribeEvents()
	defer cancel()
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		for {
			evs, next, err := h.app.EventsFrom(off, 1<<20, f, nil)
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
