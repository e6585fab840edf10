package apptest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Request is one HTTP request a test sends to a real server.
type Request struct {
	Method string // GET when empty
	URL    string
	Body   string
	// Header holds the request headers; "Host" names the request's Host.
	Header map[string]string
	// Timeout bounds the whole exchange (none when zero, apart from the
	// test's own deadline).
	Timeout time.Duration
	// Ctx is the request's context; the test's context when nil.
	Ctx context.Context
}

// Do sends r with the default client and returns the status and the whole
// body. It fails the test if the request cannot be built or sent, or the
// body cannot be read; an answer that does not come within r.Timeout is
// reported as a server that hangs.
func Do(t testing.TB, r Request) (int, []byte) {
	t.Helper()
	ctx := r.Ctx
	if ctx == nil {
		ctx = t.Context()
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, strings.NewReader(r.Body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, r.URL, err)
	}
	for k, v := range r.Header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (no answer: the server hangs or is gone)", method, r.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, r.URL, err)
	}
	return resp.StatusCode, b
}
