package summarize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Retry policy for the API providers: rate limits (429), Anthropic's
// "overloaded" (529) and server errors are worth a few more tries; anything
// else is the caller's fault and is reported at once.
const (
	defaultAttempts   = 4
	defaultBackoff    = time.Second
	maxBackoff        = 30 * time.Second
	maxResponseBytes  = 8 << 20
	errorBodySnippets = 500
)

// httpAPI is what the Anthropic and OpenAI providers share: a client, the
// overall timeout, and bounded retries with exponential backoff.
type httpAPI struct {
	provider string
	client   *http.Client
	timeout  time.Duration
	attempts int
	backoff  time.Duration // first retry delay; doubled each time, capped at maxBackoff
}

func newHTTPAPI(provider string, timeout time.Duration) httpAPI {
	return httpAPI{
		provider: provider,
		client:   &http.Client{},
		timeout:  timeout,
		attempts: defaultAttempts,
		backoff:  defaultBackoff,
	}
}

// checkBaseURL refuses a base URL that is not absolute http(s), so a typo is
// reported by New and not as a confusing transport error later.
func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("summarize: bad base URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("summarize: base URL %q must be an absolute http(s) URL", base)
	}
	return nil
}

// apiError turns an error reply into the provider's message; decode
// extracts the message from the provider's error JSON ("" if none).
type apiError func(body []byte) string

// post sends body as JSON and returns the reply body of a 2xx response. It
// retries retryable statuses and transport errors, honouring Retry-After
// and ctx, and fails with an *Error carrying the API's message and status.
// The whole exchange, retries included, is bounded by the timeout.
func (h httpAPI) post(ctx context.Context, endpoint string, header http.Header, body any, decode apiError) ([]byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, failure(h.provider, err, "cannot encode request: %v", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	// ctxFailure reports the context's end as a timeout or a cancellation.
	ctxFailure := func(last error) error {
		if err := ctx.Err(); err != nil {
			return failure(h.provider, err, "canceled: %v", err)
		}
		e := failure(h.provider, context.DeadlineExceeded, "timed out after %s", h.timeout)
		if last != nil {
			e.Message += " (last error: " + last.Error() + ")"
		}
		return e
	}

	var last error
	for attempt := 0; attempt < max(h.attempts, 1); attempt++ {
		if attempt > 0 {
			delay := h.backoff << (attempt - 1)
			if ra := retryAfter(last); ra > delay {
				delay = ra
			}
			delay = min(delay, maxBackoff)
			t := time.NewTimer(delay)
			select {
			case <-runCtx.Done():
				t.Stop()
				return nil, ctxFailure(last)
			case <-t.C:
			}
		}
		req, err := http.NewRequestWithContext(runCtx, http.MethodPost, endpoint, bytes.NewReader(payload))
		if err != nil {
			return nil, failure(h.provider, err, "cannot build request: %v", err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.client.Do(req)
		if err != nil {
			if runCtx.Err() != nil {
				return nil, ctxFailure(nil)
			}
			last = failure(h.provider, err, "request to %s failed: %v", redactURL(endpoint), err)
			continue
		}
		data, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
		if readErr != nil {
			if runCtx.Err() != nil {
				return nil, ctxFailure(nil)
			}
			last = failure(h.provider, readErr, "reading the reply failed: %v", readErr)
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return data, nil
		}
		msg := decode(data)
		if msg == "" {
			msg = strings.TrimSpace(snippet(string(data), errorBodySnippets))
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		e := failure(h.provider, nil, "%s", msg)
		e.Status = resp.StatusCode
		if !retryable(resp.StatusCode) {
			return nil, e
		}
		last = &retryErr{err: e, after: parseRetryAfter(resp.Header.Get("Retry-After"))}
	}
	var re *retryErr
	if errors.As(last, &re) {
		return nil, re.err
	}
	return nil, last
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == 529 || status >= 500
}

// retryErr remembers the server's Retry-After alongside the failure.
type retryErr struct {
	err   *Error
	after time.Duration
}

func (r *retryErr) Error() string { return r.err.Error() }
func (r *retryErr) Unwrap() error { return r.err }

func retryAfter(err error) time.Duration {
	var re *retryErr
	if errors.As(err, &re) {
		return re.after
	}
	return 0
}

// parseRetryAfter reads the delay-seconds form of Retry-After; the HTTP-date
// form is rare for these APIs and falls back to our own backoff.
func parseRetryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// redactURL drops user info and query from a URL before it goes into an
// error message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the endpoint"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
