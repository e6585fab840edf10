// Package client is a typed Go client for the HTTP API of a running
// `hivemem run` (docs/api.md). Its request and result types are the
// server's own — app.SearchRequest / app.SearchResult, palace.Digest,
// manager.Status — so a Go program (the CLI, a test, a harness) talks to
// the daemon without building paths or decoding by hand:
//
//	c := client.New("127.0.0.1:7777", token) // token "" on loopback without manager.token
//	res, err := c.Search(ctx, app.SearchRequest{Query: "flaky login test", Results: 5})
//	for _, h := range res.Hits { fmt.Println(h.Source, h.LineStart, h.Heading) }
//
// An answer other than 200 is an *Error carrying the status and the
// server's message ({"error": "..."}).
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/palace"
)

// The API's paths, as the server serves them.
const (
	PathManager = "/api/v1/manager"
	PathStatus  = "/api/v1/status"
	PathSearch  = "/api/v1/search"
	PathWakeUp  = "/api/v1/wake-up"
)

// maxBody bounds an answer read into memory.
const maxBody = 64 << 20

// Client talks to one server. The zero HTTP uses http.DefaultClient.
type Client struct {
	// Base is the server's root URL, e.g. "http://127.0.0.1:7777".
	Base string
	// Token is sent as a bearer token when set (manager.token).
	Token string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
}

// New returns a client for the server at addr: host:port (as
// `hivemem run` records it) or a URL.
func New(addr, token string) *Client {
	base := addr
	if !strings.Contains(addr, "://") {
		base = "http://" + addr
	}
	return &Client{Base: strings.TrimRight(base, "/"), Token: token}
}

// Error is an answer other than 200.
type Error struct {
	URL     string
	Status  int
	Message string // the server's {"error": ...}, else the start of the body
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s answered %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Message)
}

// get fetches path with query q and decodes the JSON answer into v.
func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	u := c.Base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxBody)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(body, 4096))
		e := &Error{URL: c.Base + path, Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
		var doc struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.Error != "" {
			e.Message = doc.Error
		}
		return e
	}
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", c.Base+path, err)
	}
	return nil
}

// Manager is GET /api/v1/manager: the running manager's own status.
func (c *Client) Manager(ctx context.Context) (manager.Status, error) {
	var st manager.Status
	err := c.get(ctx, PathManager, nil, &st)
	return st, err
}

// Search is GET /api/v1/search. The server validates r as every surface
// does; a malformed request is an *Error with status 400.
func (c *Client) Search(ctx context.Context, r app.SearchRequest) (app.SearchResult, error) {
	q := url.Values{"q": {r.Query}}
	for k, v := range map[string]string{"mode": r.Mode, "wing": r.Wing, "room": r.Room, "agent": r.Agent, "since": r.Since, "until": r.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if r.Results != 0 {
		q.Set("results", strconv.Itoa(r.Results))
	}
	var res app.SearchResult
	err := c.get(ctx, PathSearch, q, &res)
	return res, err
}

// WakeUp is GET /api/v1/wake-up: one wing's digest, or without a wing the
// hive overview.
func (c *Client) WakeUp(ctx context.Context, r app.WakeUpRequest) (palace.Digest, error) {
	q := url.Values{}
	if r.Wing != "" {
		q.Set("wing", r.Wing)
	}
	if r.Budget != 0 {
		q.Set("budget", strconv.Itoa(r.Budget))
	}
	var d palace.Digest
	err := c.get(ctx, PathWakeUp, q, &d)
	return d, err
}
