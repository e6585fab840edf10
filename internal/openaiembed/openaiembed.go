// Package openaiembed computes embeddings through any OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, llama.cpp, vLLM, ...), for users
// who prefer a model served elsewhere to the built-in MiniLM. It batches
// inputs, retries transient failures with backoff, checks every response
// (count, order, dimension) and returns L2-normalised vectors.
package openaiembed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hivemem/hivemem/internal/kernel"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 3
	DefaultBatchSize  = 64
)

// Config configures a Client.
type Config struct {
	// BaseURL of the API: "http://host:11434/v1" or "http://host:11434"
	// (/v1/embeddings is appended), or the full ".../embeddings" URL.
	BaseURL string
	// Model is sent as "model" with every request.
	Model string
	// APIKey, if set, is sent as a Bearer token.
	APIKey string
	// Dim is the expected vector dimension; 0 learns it from the first
	// response and then holds every later response to it.
	Dim int
	// Timeout bounds each HTTP request (0: DefaultTimeout).
	Timeout time.Duration
	// MaxRetries is how many times a failed request is retried on network
	// errors, 429 and 5xx (0: DefaultMaxRetries; negative: never).
	MaxRetries int
	// BatchSize is the most texts sent in one request (0: DefaultBatchSize).
	BatchSize int
	// HTTPClient, if set, is used instead of a default client.
	HTTPClient *http.Client
}

// Client embeds texts through an OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	endpoint   string
	model      string
	apiKey     string
	timeout    time.Duration
	maxRetries int
	batchSize  int
	http       *http.Client

	// backoffBase is the first retry delay; it doubles on each retry up to
	// backoffMax. Tests shorten them.
	backoffBase, backoffMax time.Duration

	mu  sync.Mutex
	dim int // expected or learned dimension; 0 until known
}

// New checks cfg and returns a client; it does not contact the server.
func New(cfg Config) (*Client, error) {
	endpoint, err := endpointURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openaiembed: no model name configured")
	}
	if cfg.Dim < 0 || cfg.BatchSize < 0 || cfg.Timeout < 0 {
		return nil, fmt.Errorf("openaiembed: negative dim (%d), batch size (%d) or timeout (%s)", cfg.Dim, cfg.BatchSize, cfg.Timeout)
	}
	c := &Client{
		endpoint:    endpoint,
		model:       cfg.Model,
		apiKey:      cfg.APIKey,
		timeout:     cfg.Timeout,
		maxRetries:  cfg.MaxRetries,
		batchSize:   cfg.BatchSize,
		http:        cfg.HTTPClient,
		backoffBase: 500 * time.Millisecond,
		backoffMax:  30 * time.Second,
		dim:         cfg.Dim,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.batchSize == 0 {
		c.batchSize = DefaultBatchSize
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	return c, nil
}

// endpointURL turns a configured base URL into the embeddings endpoint.
func endpointURL(base string) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return "", errors.New("openaiembed: no base URL configured")
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("openaiembed: base URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("openaiembed: base URL %q must be http:// or https:// with a host", base)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path = p
	u.RawPath = ""
	return u.String(), nil
}

// Dim returns the vector dimension: the configured one, else the one
// learned from the first response, else 0.
func (c *Client) Dim() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dim
}

// ModelID names the model for the index ("openai:" + model).
func (c *Client) ModelID() string { return "openai:" + c.model }

// Endpoint is the URL requests go to, for status output.
func (c *Client) Endpoint() string { return c.endpoint }

// Embed returns one L2-normalised vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batchSize {
		batch := texts[start:min(start+c.batchSize, len(texts))]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			if len(texts) > len(batch) {
				return nil, fmt.Errorf("embed texts %d-%d of %d: %w", start, start+len(batch)-1, len(texts), err)
			}
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
}

// statusError is a non-2xx answer.
type statusError struct {
	url    string
	status int
	msg    string
	retry  time.Duration // from Retry-After, if any
}

func (e *statusError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("POST %s: HTTP %d %s", e.url, e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("POST %s: HTTP %d %s: %s", e.url, e.status, http.StatusText(e.status), e.msg)
}

func (e *statusError) transient() bool {
	return e.status == http.StatusTooManyRequests || e.status >= 500
}

// embedBatch sends one request, retrying transient failures.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("openaiembed: encode request: %w", err)
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		raw, err := c.post(ctx, body)
		if err == nil {
			return c.decode(raw, len(texts))
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openaiembed: %w", errors.Join(ctx.Err(), err))
		}
		lastErr = err
		var se *statusError
		retryable := !errors.As(err, &se) || se.transient()
		if !retryable {
			return nil, fmt.Errorf("openaiembed: %w", err)
		}
		if attempt >= c.maxRetries {
			break
		}
		wait := c.backoff(attempt)
		if se != nil && se.retry > 0 {
			wait = min(se.retry, c.backoffMax)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("openaiembed: %w (while waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
	return nil, fmt.Errorf("openaiembed: giving up after %d attempts: %w", c.maxRetries+1, lastErr)
}

// backoff is base·2^attempt, capped, with up to 25% jitter so that many
// clients do not retry in step.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffBase << min(attempt, 20)
	if d <= 0 || d > c.backoffMax {
		d = c.backoffMax
	}
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// post makes one HTTP request and returns the body of a 2xx answer.
func (c *Client) post(ctx context.Context, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", c.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, fmt.Errorf("POST %s: no answer within %s", c.endpoint, c.timeout)
		}
		return nil, fmt.Errorf("POST %s: endpoint unreachable: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 512<<20))
	if err != nil {
		return nil, fmt.Errorf("POST %s: read answer: %w", c.endpoint, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &statusError{url: c.endpoint, status: resp.StatusCode, msg: errorMessage(raw), retry: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return raw, nil
}

// errorMessage extracts the server's explanation from an error body: the
// OpenAI shape {"error":{"message":...}}, the Ollama/llama.cpp shape
// {"error":"..."}, {"message":...} or {"detail":...}, else the raw text.
func errorMessage(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		switch {
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case body.Message != "":
			return body.Message
		case json.Unmarshal(body.Detail, &s) == nil && s != "":
			return s
		case len(body.Detail) > 0 && string(body.Detail) != "null":
			return string(body.Detail)
		}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// decode checks a 2xx answer and returns its vectors in input order.
func (c *Client) decode(raw []byte, n int) ([][]float32, error) {
	var resp response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("openaiembed: %s: answer is not an embeddings response: %w", c.endpoint, err)
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("openaiembed: %s returned %d embeddings for %d inputs", c.endpoint, len(resp.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range resp.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, fmt.Errorf("openaiembed: %s returned a bad or repeated index %d", c.endpoint, i)
		}
		v, err := parseVector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("openaiembed: %s: embedding %d: %w", c.endpoint, i, err)
		}
		if err := c.checkDim(len(v)); err != nil {
			return nil, err
		}
		kernel.Normalize(v)
		out[i] = v
	}
	return out, nil
}

// checkDim learns the dimension from the first vector, or holds a vector to
// the known one: vectors of different sizes must never reach the index.
func (c *Client) checkDim(got int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if got == 0 {
		return fmt.Errorf("openaiembed: %s returned an empty vector", c.endpoint)
	}
	if c.dim == 0 {
		c.dim = got
		return nil
	}
	if got != c.dim {
		return fmt.Errorf("openaiembed: %s returned %d-dimensional vectors, expected %d (model %q)", c.endpoint, got, c.dim, c.model)
	}
	return nil
}

// parseVector accepts a JSON array of numbers or, from servers that answer
// in base64 regardless, a base64 string of little-endian float32s.
func parseVector(raw json.RawMessage) ([]float32, error) {
	var v []float32
	if err := json.Unmarshal(raw, &v); err == nil {
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("non-finite value at %d", j)
			}
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("neither a number array nor a base64 string")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, fmt.Errorf("bad base64 vector")
	}
	v = make([]float32, len(b)/4)
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		if math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
			return nil, fmt.Errorf("non-finite value at %d", j)
		}
	}
	return v, nil
}
