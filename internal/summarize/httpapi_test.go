package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// reply is one scripted HTTP response.
type reply struct {
	status int
	header map[string]string
	body   string
}

// seen is what the fake server received.
type seen struct {
	method, path string
	header       http.Header
	body         []byte
}

// scriptServer answers with the scripted replies in order, repeating the
// last one, and records every request.
type scriptServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []seen
}

func newScriptServer(t *testing.T, replies ...reply) *scriptServer {
	t.Helper()
	s := &scriptServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.got)
		s.got = append(s.got, seen{r.Method, r.URL.Path, r.Header.Clone(), body})
		rp := s.replies[min(n, len(s.replies)-1)]
		s.mu.Unlock()
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		if rp.header["Content-Type"] == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rp.status)
		io.WriteString(w, rp.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// fastRetries shortens the backoff of an API summariser built by New so
// retry tests take milliseconds.
func fastRetries(t *testing.T, s Summarizer) {
	t.Helper()
	switch v := s.(type) {
	case *anthropicAPI:
		v.backoff = time.Millisecond
	case *openAIAPI:
		v.backoff = time.Millisecond
	default:
		t.Fatalf("%T is not an API summariser", s)
	}
}

// goodReply is the contract object the fake APIs return as model text.
const goodReply = `{"condensed": "- 2026-11-29 Bob fixed auth/login_test.go", "hoist": ["Never push to main"]}`

var apiReq = Request{
	Agent:        "alice",
	OldCondensed: "- 2026-10-01 moved to SQLite",
	Evicted:      []string{"## 2026-11-29 — login test\nBob fixed auth/login_test.go.\nNever push to main.\n"},
	Pinned:       []string{"Run go test ./..."},
	WordBudget:   300,
}

// apiCase is one table row shared by the API provider tests.
type apiCase struct {
	name      string
	replies   []reply
	wantCalls int
	wantErr   string // substring of the error; "" means success
	status    int    // wanted *Error.Status
}

// runAPICases runs each case against a server scripted with its replies:
// a summarizer configured by cfg (given the server's URL) summarizes
// apiReq; the result is checked against the case and every request the
// server saw by checkRequest.
func runAPICases(t *testing.T, tests []apiCase, cfg func(url string) Config, checkRequest func(t *testing.T, r seen)) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptServer(t, tc.replies...)
			c := cfg(srv.URL)
			s, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			fastRetries(t, s)
			res, err := s.Summarize(context.Background(), apiReq)
			got := srv.requests()
			checkAPIResult(t, tc, c.Provider, res, err, len(got))
			for _, r := range got {
				checkRequest(t, r)
			}
		})
	}
}

func checkAPIResult(t *testing.T, tc apiCase, provider string, res Result, err error, calls int) {
	t.Helper()
	if calls != tc.wantCalls {
		t.Errorf("server saw %d requests, want %d", calls, tc.wantCalls)
	}
	if tc.wantErr == "" {
		if err != nil {
			t.Fatal(err)
		}
		if res.Condensed != "- 2026-11-29 Bob fixed auth/login_test.go" || len(res.Hoist) != 1 || res.Hoist[0] != "Never push to main" {
			t.Fatalf("result = %+v", res)
		}
		return
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	if se.Provider != provider || se.Reason != ReasonFailed || se.Status != tc.status {
		t.Errorf("error = %+v, want provider %s, reason %s, status %d", se, provider, ReasonFailed, tc.status)
	}
	if !strings.Contains(err.Error(), tc.wantErr) {
		t.Errorf("err = %q, want it to contain %q", err, tc.wantErr)
	}
}

// hangingServer never answers until the client gives up. It reads the body
// first: only then does net/http notice the client closing the connection.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second): // never hang the test run
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAPITimeoutAndCancel checks that both API providers give up at their
// timeout or when the caller cancels, with the right cause attached.
func TestAPITimeoutAndCancel(t *testing.T) {
	srv := hangingServer(t)
	cfgs := []Config{
		{Provider: "anthropic", APIKey: "k", BaseURL: srv.URL},
		{Provider: "openai", Model: "m", BaseURL: srv.URL},
	}
	for _, cfg := range cfgs {
		t.Run(cfg.Provider, func(t *testing.T) {
			cfg.Timeout = 200 * time.Millisecond
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = s.Summarize(context.Background(), apiReq)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 200ms") {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("timeout took %s", d)
			}

			cfg.Timeout = time.Minute
			s, err = New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			_, err = s.Summarize(ctx, apiReq)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "canceled") {
				t.Fatalf("err = %v, want a cancellation", err)
			}
		})
	}
}

// TestAPIRetryHonoursContext checks that a cancellation during the backoff
// wait ends the call at once instead of sleeping it out.
func TestAPIRetryHonoursContext(t *testing.T) {
	srv := newScriptServer(t, reply{status: 429, header: map[string]string{"Retry-After": "30"},
		body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`})
	s, err := New(Config{Provider: "anthropic", APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Summarize(ctx, apiReq)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %s, want the caller's deadline promptly", err, time.Since(start))
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := map[string]time.Duration{"": 0, "3": 3 * time.Second, " 0 ": 0, "-1": 0, "Wed, 21 Oct 2015 07:28:00 GMT": 0}
	for in, want := range tests {
		if got := parseRetryAfter(in); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, b)
	}
	return m
}
