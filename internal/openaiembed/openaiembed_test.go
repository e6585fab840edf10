package openaiembed

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the OpenAI embeddings wire format. vec(text) gives each
// input's raw (unnormalised) vector; answer may override the response.
type fakeServer struct {
	requests atomic.Int32
	vec      func(text string) []float32
	answer   func(n int32, w http.ResponseWriter, req request) bool // true: handled
	reverse  bool                                                   // send data in reverse order
	lastAuth atomic.Value
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
		return
	}
	f.lastAuth.Store(r.Header.Get("Authorization"))
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if f.answer != nil && f.answer(n, w, req) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, text := range req.Input {
		data = append(data, item{"embedding", i, f.vec(text)})
	}
	if f.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

// vec3 maps a text to a 3-d vector that encodes its length, so tests can
// tell which vector belongs to which input.
func vec3(text string) []float32 { return []float32{float32(len(text)), 2, 0} }

func newTest(t *testing.T, f *fakeServer, cfg Config) (*Client, *httptest.Server) {
	t.Helper()
	if f.vec == nil {
		f.vec = vec3
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "nomic-embed-text"
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase, c.backoffMax = time.Millisecond, 20*time.Millisecond
	return c, srv
}

func TestEmbedBatchesAndOrders(t *testing.T) {
	f := &fakeServer{reverse: true}
	c, _ := newTest(t, f, Config{BatchSize: 2, APIKey: "sk-test"})
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.requests.Load(); n != 3 {
		t.Errorf("%d requests for 5 texts in batches of 2, want 3", n)
	}
	if auth := f.lastAuth.Load(); auth != "Bearer sk-test" {
		t.Errorf("Authorization = %v", auth)
	}
	for i, text := range texts {
		raw := vec3(text)
		norm := math.Hypot(float64(raw[0]), float64(raw[1]))
		if math.Abs(float64(got[i][0])-float64(raw[0])/norm) > 1e-6 || math.Abs(float64(got[i][1])-2/norm) > 1e-6 {
			t.Errorf("text %q: vector %v, want %v normalised", text, got[i], raw)
		}
	}
	if c.Dim() != 3 {
		t.Errorf("learned Dim = %d, want 3", c.Dim())
	}
	if c.ModelID() != "openai:nomic-embed-text" {
		t.Errorf("ModelID = %q", c.ModelID())
	}
	empty, err := c.Embed(context.Background(), nil)
	if err != nil || len(empty) != 0 {
		t.Errorf("no texts: %v, %v", empty, err)
	}
}

func TestEmbedErrors(t *testing.T) {
	jsonError := func(status int, body string) func(int32, http.ResponseWriter, request) bool {
		return func(_ int32, w http.ResponseWriter, _ request) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return true
		}
	}
	tests := []struct {
		name         string
		cfg          Config
		answer       func(int32, http.ResponseWriter, request) bool
		vec          func(string) []float32
		wantErr      string
		wantRequests int32
	}{
		{
			name:         "openai 401 not retried",
			answer:       jsonError(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`),
			wantErr:      "HTTP 401 Unauthorized: Incorrect API key provided",
			wantRequests: 1,
		},
		{
			name:         "ollama 404 string error",
			answer:       jsonError(404, `{"error":"model \"nomic\" not found, try pulling it first"}`),
			wantErr:      `model "nomic" not found`,
			wantRequests: 1,
		},
		{
			name:         "plain text 400",
			answer:       jsonError(400, `input too long`),
			wantErr:      "HTTP 400 Bad Request: input too long",
			wantRequests: 1,
		},
		{
			name:         "503 retried then fails",
			cfg:          Config{MaxRetries: 2},
			answer:       jsonError(503, `{"error":{"message":"overloaded"}}`),
			wantErr:      "giving up after 3 attempts",
			wantRequests: 3,
		},
		{
			name:         "no retries",
			cfg:          Config{MaxRetries: -1},
			answer:       jsonError(500, `{"error":"boom"}`),
			wantErr:      "boom",
			wantRequests: 1,
		},
		{
			name:         "expected dimension",
			cfg:          Config{Dim: 384},
			wantErr:      "returned 3-dimensional vectors, expected 384",
			wantRequests: 1,
		},
		{
			name: "wrong count",
			answer: func(_ int32, w http.ResponseWriter, _ request) bool {
				fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,2]}]}`)
				return true
			},
			wantErr:      "returned 1 embeddings for 2 inputs",
			wantRequests: 1,
		},
		{
			name: "repeated index",
			answer: func(_ int32, w http.ResponseWriter, _ request) bool {
				fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`)
				return true
			},
			wantErr:      "bad or repeated index 0",
			wantRequests: 1,
		},
		{
			name: "not an embeddings answer",
			answer: func(_ int32, w http.ResponseWriter, _ request) bool {
				fmt.Fprint(w, `<html>proxy login</html>`)
				return true
			},
			wantErr:      "not an embeddings response",
			wantRequests: 1,
		},
		{
			name:         "vectors of different sizes",
			vec:          func(s string) []float32 { return make([]float32, 2+len(s)) },
			wantErr:      "returned 4-dimensional vectors, expected 3",
			wantRequests: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServer{answer: tc.answer, vec: tc.vec}
			c, _ := newTest(t, f, tc.cfg)
			_, err := c.Embed(context.Background(), []string{"x", "yy"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if n := f.requests.Load(); n != tc.wantRequests {
				t.Errorf("%d requests, want %d", n, tc.wantRequests)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, status := range []int{429, 500, 502} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			f := &fakeServer{answer: func(n int32, w http.ResponseWriter, _ request) bool {
				if n <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(status)
					return true
				}
				return false
			}}
			c, _ := newTest(t, f, Config{})
			got, err := c.Embed(context.Background(), []string{"hello"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || f.requests.Load() != 3 {
				t.Errorf("%d vectors after %d requests", len(got), f.requests.Load())
			}
		})
	}
}

func TestTimeoutRetried(t *testing.T) {
	f := &fakeServer{answer: func(n int32, w http.ResponseWriter, _ request) bool {
		if n == 1 {
			time.Sleep(300 * time.Millisecond)
		}
		return false
	}}
	c, _ := newTest(t, f, Config{Timeout: 50 * time.Millisecond})
	if _, err := c.Embed(context.Background(), []string{"slow"}); err != nil {
		t.Fatal(err)
	}
	if n := f.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (one timed out)", n)
	}

	f2 := &fakeServer{answer: func(int32, http.ResponseWriter, request) bool {
		time.Sleep(200 * time.Millisecond)
		return false
	}}
	c2, _ := newTest(t, f2, Config{Timeout: 20 * time.Millisecond, MaxRetries: 1})
	_, err := c2.Embed(context.Background(), []string{"slow"})
	if err == nil || !strings.Contains(err.Error(), "no answer within 20ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := New(Config{BaseURL: url, Model: "m", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase = time.Millisecond
	_, err = c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), url+"/v1/embeddings") {
		t.Fatalf("err = %v, want unreachable naming %s", err, url)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := &fakeServer{answer: func(_ int32, w http.ResponseWriter, _ request) bool {
		w.WriteHeader(503)
		return true
	}}
	c, _ := newTest(t, f, Config{MaxRetries: 5})
	c.backoffBase, c.backoffMax = time.Minute, time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to notice cancellation", d)
	}
}

func TestBase64Vectors(t *testing.T) {
	enc := func(v []float32) string {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	f := &fakeServer{answer: func(_ int32, w http.ResponseWriter, req request) bool {
		fmt.Fprintf(w, `{"data":[{"index":0,"embedding":%q}]}`, enc([]float32{3, 4}))
		return true
	}}
	c, _ := newTest(t, f, Config{Dim: 2})
	got, err := c.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(got[0][0])-0.6) > 1e-6 || math.Abs(float64(got[0][1])-0.8) > 1e-6 {
		t.Errorf("got %v, want [0.6 0.8]", got[0])
	}
}

func TestEndpointURL(t *testing.T) {
	tests := []struct {
		base, want, wantErr string
	}{
		{"http://localhost:11434", "http://localhost:11434/v1/embeddings", ""},
		{"http://localhost:11434/", "http://localhost:11434/v1/embeddings", ""},
		{"http://localhost:8080/v1", "http://localhost:8080/v1/embeddings", ""},
		{"https://gw.example/openai/v1/", "https://gw.example/openai/v1/embeddings", ""},
		{"https://gw.example/custom/embeddings", "https://gw.example/custom/embeddings", ""},
		{"", "", "no base URL"},
		{"localhost:11434", "", "must be http"},
		{"ftp://x/v1", "", "must be http"},
	}
	for _, tc := range tests {
		got, err := endpointURL(tc.base)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("endpointURL(%q) err = %v, want %q", tc.base, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("endpointURL(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg     Config
		wantErr string
	}{
		{Config{BaseURL: "http://h"}, "no model"},
		{Config{BaseURL: "http://h", Model: "m", Dim: -1}, "negative"},
		{Config{BaseURL: "http://h", Model: "m", BatchSize: -2}, "negative"},
	}
	for _, tc := range tests {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("New(%+v) err = %v, want %q", tc.cfg, err, tc.wantErr)
		}
	}
	c, err := New(Config{BaseURL: "http://h", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != DefaultTimeout || c.maxRetries != DefaultMaxRetries || c.batchSize != DefaultBatchSize || c.Dim() != 0 {
		t.Errorf("defaults not applied: %+v", c)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"m1","type":"t"}}`, "m1"},
		{`{"error":"m2"}`, "m2"},
		{`{"message":"m3"}`, "m3"},
		{`{"detail":"m4"}`, "m4"},
		{`{"detail":[{"loc":["body"],"msg":"field required"}]}`, `[{"loc":["body"],"msg":"field required"}]`},
		{"  plain  ", "plain"},
		{strings.Repeat("x", 400), strings.Repeat("x", 300) + "..."},
	}
	for _, tc := range tests {
		if got := errorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("errorMessage(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
