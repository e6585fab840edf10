package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/web"
)

// TestEventStreamHEAD: HEAD on the stream answers the stream's headers and
// ends; its parameters are checked as for GET.
func TestEventStreamHEAD(t *testing.T) {
	e := newEnv(t, web.Deps{})
	defer e.h.Close()
	serve := func(target string) *httptest.ResponseRecorder {
		t.Helper()
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, target, nil))
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("HEAD %s did not end", target)
		}
		return w
	}
	w := serve("/api/v1/events/stream")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream; charset=utf-8" || w.Body.Len() != 0 {
		t.Errorf("HEAD stream = %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	if w := serve("/api/v1/events/stream?from=abc"); w.Code != 400 {
		t.Errorf("HEAD stream with a bad offset = %d", w.Code)
	}
}

// TestEventStreamEndsWhenClientGoes: a stream whose client has gone away
// ends without Close, so the server can shut down.
func TestEventStreamEndsWhenClientGoes(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/events/stream", nil)
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 8)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream = %d, %v", resp.StatusCode, err)
	}
	cancel()
	resp.Body.Close()
	// httptest.Server.Close waits for every connection to end, which the
	// stream's does only when its handler returns.
	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		e.h.Close() // let the server close so the test can end
		<-closed
		t.Fatal("the stream did not end when its client went away")
	}
}

// TestEventsShowTheHarnessLines: the hive log is shared with the harness,
// so its own lines ({ts, kind, agentId, ...}), hivemem's old form and
// unknown kinds are listed plainly; a malformed line is skipped and
// counted, never an error.
func TestEventsShowTheHarnessLines(t *testing.T) {
	e := newEnv(t, web.Deps{})
	f, err := os.OpenFile(e.a.Home().LogPath(), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"ts":1796119200000,"kind":"spawn","agentId":"coder","engine":"claude"}
{"ts":1796119201000,"kind":"condense-abort","agentId":"coder","reason":"too-small","oldBytes":812}
{torn line
{"ts":1796119202000,"kind":"teleport","agentId":"coder"}
{"time":"2026-12-01T10:00:03Z","type":"restore","agent":"coder","data":{"backup":"x"}}
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.c.Events(t.Context(), client.EventsRequest{Agent: "coder", N: 10})
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	var kinds []string
	for _, ev := range r.Events {
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) < 4 || !slices.Equal(kinds[len(kinds)-4:], []string{"spawn", "condense-abort", "teleport", "restore"}) || r.Skipped != 1 {
		t.Fatalf("events = %v, skipped %d; want the four lines last and one skipped", kinds, r.Skipped)
	}
	r.Events = r.Events[len(r.Events)-4:]
	if r.Events[0].Data["engine"] != "claude" || r.Events[1].Reason != "too-small" || r.Events[1].Data["oldBytes"] != float64(812) ||
		r.Events[0].Time.UnixMilli() != 1796119200000 {
		t.Errorf("harness fields = %+v, %+v", r.Events[0], r.Events[1])
	}
	if r, err := e.c.Events(t.Context(), client.EventsRequest{Kind: "spawn"}); err != nil || len(r.Events) != 1 || r.Events[0].Agent != "coder" || r.Events[0].Kind != "spawn" {
		t.Errorf("kind=spawn = %v %+v", err, r.Events)
	}
	// type is kind's older name, still taken.
	w := e.do(t, req{target: "/api/v1/events?type=spawn"})
	if r := decode[web.EventsResponse](t, w); len(r.Events) != 1 || r.Events[0].Kind != "spawn" {
		t.Errorf("type=spawn = %+v", r.Events)
	}
	w = e.do(t, req{target: "/events?agent=coder"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<span class="ev-type">teleport</span>`) || !strings.Contains(w.Body.String(), `<span class="ev-type">spawn</span>`) {
		t.Errorf("events page = %d, lacks the harness's kinds", w.Code)
	}
}

// TestEventStreamHEADEndsHandler: HEAD on the event stream. A HEAD response has
// no body, so a keep-alive client reuses the connection as soon as it has
// the headers; the stream handler, however, keeps running (its writes to a
// HEAD response are discarded and never fail), so the server never reads
// the next request on that connection: the client's next request hangs.
func TestEventStreamHEADEndsHandler(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	// Runs before srv.Close: ends the stuck stream so the test can finish.
	defer e.h.Close()
	// One connection, reused: what any keep-alive client does.
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 2 * time.Second}

	resp, err := client.Head(srv.URL + "/api/v1/events/stream")
	if err != nil {
		t.Fatalf("HEAD stream: %v", err)
	}
	resp.Body.Close()
	resp, err = client.Get(srv.URL + "/api/v1/status")
	if err != nil {
		t.Fatalf("GET /api/v1/status after HEAD /api/v1/events/stream on the same connection: %v (the stream handler never ended)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status = %d", resp.StatusCode)
	}
}

// TestEventStreamOddOffsets: offsets past the end, mid-line and huge
// replay from a sane place instead of failing or hanging.
func TestEventStreamOddOffsets(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	for _, from := range []string{"0", "7", "9223372036854775807"} {
		t.Run(from, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/events/stream?from="+from, nil)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("= %d", resp.StatusCode)
			}
			// Each replays the whole demo log (5 events) or, mid-line, the
			// events after the broken first line.
			sc := bufio.NewScanner(resp.Body)
			n := 0
			for sc.Scan() && n < 4 {
				if strings.HasPrefix(sc.Text(), "data: ") {
					n++
				}
			}
			if n < 4 {
				t.Fatalf("only %d events replayed", n)
			}
		})
	}
}
