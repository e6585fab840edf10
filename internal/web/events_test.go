package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
