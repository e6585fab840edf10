// Package client is a typed Go client for the HTTP API of a running
// `hivemem run` (docs/api.md): one method per /api/v1 endpoint, with the
// app's request and result types — app.SearchRequest / app.SearchResult,
// app.WakeUpResult, app.CondenseRequest / app.CondenseResult,
// app.ManagerStatus, and so on — beside the dashboard's own
// (web.StatusReport, web.AgentSummary, web.MemoryView), and the paths of
// the server's route table (web.Route*), so a Go program
// (the CLI, a test, a harness) talks to the daemon without building paths
// or decoding by hand:
//
//	c := client.New("127.0.0.1:7777", token) // token "" on loopback without manager.token
//	res, err := c.Search(ctx, app.SearchRequest{Query: "flaky login test", Results: 5})
//	for _, h := range res.Hits { fmt.Println(h.Source, h.LineStart, h.Heading) }
//	prev, err := c.Condense(ctx, "tester", app.CondenseRequest{DryRun: true})
//
// An answer other than 200 is an *Error carrying the status and the
// server's message ({"error": "..."}); a request the server refuses as
// malformed is a 400, as from any surface. The client sends no Origin
// header, so the server's same-origin check lets its POSTs and PATCHes
// through; with manager.token set, pass the token to New.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/web"
)

// maxBody bounds an answer read into memory, maxEventLine one line of an
// event stream (the server skips log lines over 1 MiB).
const (
	maxBody      = 64 << 20
	maxEventLine = 4 << 20
)

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

// call is one request: a route of the server's table (web.Route*) with
// its path values, query and JSON body.
type call struct {
	route string   // "METHOD /path/{name}/..."
	args  []string // the path's {name} values, in order
	query url.Values
	body  any // sent as JSON when non-nil
}

// target splits the route into its method and the URL with the path
// values filled in (escaped) and the query added.
func (c *Client) target(k call) (method, u string, err error) {
	method, pattern, ok := strings.Cut(k.route, " ")
	if !ok {
		return "", "", fmt.Errorf("client: route %q has no method", k.route)
	}
	segs := strings.Split(pattern, "/")
	n := 0
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		if n >= len(k.args) {
			return "", "", fmt.Errorf("client: %s needs %s", k.route, s)
		}
		if k.args[n] == "" {
			return "", "", fmt.Errorf("client: %s: %s is empty", k.route, s)
		}
		segs[i] = url.PathEscape(k.args[n])
		n++
	}
	u = c.Base + strings.Join(segs, "/")
	if len(k.query) > 0 {
		u += "?" + k.query.Encode()
	}
	return method, u, nil
}

// do sends k and returns the response of a 200 answer; any other status
// is an *Error. The caller closes the body.
func (c *Client) do(ctx context.Context, k call) (*http.Response, error) {
	method, u, err := c.target(k)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if k.body != nil {
		b, err := json.Marshal(k.body)
		if err != nil {
			return nil, fmt.Errorf("client: %s: encode the body: %w", k.route, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
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
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		e := &Error{URL: u, Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
		var doc struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.Error != "" {
			e.Message = doc.Error
		}
		return nil, e
	}
	return resp, nil
}

// decode sends k and decodes the JSON answer into a T.
func decode[T any](ctx context.Context, c *Client, k call) (T, error) {
	var v T
	resp, err := c.do(ctx, k)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&v); err != nil {
		return v, fmt.Errorf("%s: %w", resp.Request.URL, err)
	}
	return v, nil
}

// Status is GET /api/v1/status: the server, index, reflector and manager
// at a glance.
func (c *Client) Status(ctx context.Context) (web.StatusReport, error) {
	return decode[web.StatusReport](ctx, c, call{route: web.RouteStatus})
}

// Manager is GET /api/v1/manager: the running manager's own status.
func (c *Client) Manager(ctx context.Context) (app.ManagerStatus, error) {
	return decode[app.ManagerStatus](ctx, c, call{route: web.RouteManager})
}

// Agents is GET /api/v1/agents: every agent against its budget, by id.
func (c *Client) Agents(ctx context.Context) ([]web.AgentSummary, error) {
	l, err := decode[web.AgentList](ctx, c, call{route: web.RouteAgents})
	return l.Agents, err
}

// Agent is GET /api/v1/agents/{agent}: one agent's summary.
func (c *Client) Agent(ctx context.Context, agent string) (web.AgentSummary, error) {
	return decode[web.AgentSummary](ctx, c, call{route: web.RouteAgent, args: []string{agent}})
}

// Memory is GET /api/v1/agents/{agent}/memory: the memory file parsed
// into its regions.
func (c *Client) Memory(ctx context.Context, agent string) (web.MemoryView, error) {
	return decode[web.MemoryView](ctx, c, call{route: web.RouteMemory, args: []string{agent}})
}

// MemoryRaw is GET /api/v1/agents/{agent}/memory?format=raw: the memory
// file's exact bytes.
func (c *Client) MemoryRaw(ctx context.Context, agent string) ([]byte, error) {
	resp, err := c.do(ctx, call{route: web.RouteMemory, args: []string{agent}, query: url.Values{"format": {"raw"}}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resp.Request.URL, err)
	}
	return b, nil
}

// Search is GET /api/v1/search. The server validates r as every surface
// does; a malformed request is an *Error with status 400. Results 0 is
// the server's default (search.results) unless ResultsGiven, which sends
// it and so has it refused as out of range, as the CLI and MCP refuse it.
func (c *Client) Search(ctx context.Context, r app.SearchRequest) (app.SearchResult, error) {
	q := url.Values{"q": {r.Query}}
	for k, v := range map[string]string{"mode": r.Mode, "wing": r.Wing, "room": r.Room, "agent": r.Agent, "since": r.Since, "until": r.Until, "as_of": r.AsOf} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if r.Results != 0 || r.ResultsGiven {
		q.Set("results", strconv.Itoa(r.Results)) // given 0: refused, as by the CLI and MCP
	}
	if r.IncludeSuperseded {
		q.Set("include_superseded", "true")
	}
	return decode[app.SearchResult](ctx, c, call{route: web.RouteSearch, query: q})
}

// WakeUp is GET /api/v1/wake-up: one wing's digest, or without a wing the
// hive overview. Budget 0 is the default unless BudgetGiven (see Search).
func (c *Client) WakeUp(ctx context.Context, r app.WakeUpRequest) (app.WakeUpResult, error) {
	q := url.Values{}
	if r.Wing != "" {
		q.Set("wing", r.Wing)
	}
	if r.Budget != 0 || r.BudgetGiven {
		q.Set("budget", strconv.Itoa(r.Budget)) // given 0: refused, as by the CLI and MCP
	}
	return decode[app.WakeUpResult](ctx, c, call{route: web.RouteWakeUp, query: q})
}

// EventsRequest selects events of the log: the newest N (the server's
// default, 100, when 0), of one agent and of one kind when set.
type EventsRequest struct {
	N     int
	Agent string
	Kind  string
}

func (r EventsRequest) query() url.Values {
	q := url.Values{}
	if r.N != 0 {
		q.Set("n", strconv.Itoa(r.N))
	}
	if r.Agent != "" {
		q.Set("agent", r.Agent)
	}
	if r.Kind != "" {
		q.Set("kind", r.Kind)
	}
	return q
}

// Events is GET /api/v1/events: the newest events of the log, oldest
// first, and the log's end offset to stream from.
func (c *Client) Events(ctx context.Context, r EventsRequest) (app.EventsResult, error) {
	return decode[app.EventsResult](ctx, c, call{route: web.RouteEvents, query: r.query()})
}

// EventStream is GET /api/v1/events/stream from the byte offset from (an
// Offset of Events or of an earlier event; -1 for the end of the log):
// every later event of r's agent and kind (r.N is ignored) as it is
// logged. Close it when done; cancelling ctx ends it too.
func (c *Client) EventStream(ctx context.Context, from int64, r EventsRequest) (*EventStream, error) {
	q := r.query()
	q.Del("n")
	if from >= 0 {
		q.Set("from", strconv.FormatInt(from, 10))
	}
	resp, err := c.do(ctx, call{route: web.RouteEventStream, query: q})
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return &EventStream{body: resp.Body, sc: sc}, nil
}

// EventStream is a live stream of events.
type EventStream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
}

// Next blocks until the next event and returns it; io.EOF when the server
// ended the stream.
func (s *EventStream) Next() (app.EventItem, error) {
	var data []byte
	for s.sc.Scan() {
		line := s.sc.Bytes()
		switch {
		case len(line) == 0:
			if data == nil {
				continue // the end of a comment or retry block
			}
			var ev app.EventItem
			if err := json.Unmarshal(data, &ev); err != nil {
				return ev, fmt.Errorf("event stream: %w", err)
			}
			return ev, nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		// ids, comments (keep-alives) and retry lines: the data says it all.
	}
	if err := s.sc.Err(); err != nil {
		return app.EventItem{}, fmt.Errorf("event stream: %w", err)
	}
	return app.EventItem{}, io.EOF
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// Condense is POST /api/v1/agents/{agent}/condense: a dry run (preview
// with its diff) or a condensation.
func (c *Client) Condense(ctx context.Context, agent string, r app.CondenseRequest) (app.CondenseResult, error) {
	return decode[app.CondenseResult](ctx, c, call{route: web.RouteCondense, args: []string{agent}, body: r})
}

// Remember is POST /api/v1/agents/{agent}/remember: a note appended to
// the agent's memory (r.Agent is taken from agent); a repeat comes back
// with Duplicate set and nothing written.
func (c *Client) Remember(ctx context.Context, agent string, r app.RememberRequest) (app.RememberResult, error) {
	return decode[app.RememberResult](ctx, c, call{route: web.RouteRemember, args: []string{agent}, body: r})
}

// Pin is POST /api/v1/agents/{agent}/pin (with r.Replaces, a fact in
// place of another).
func (c *Client) Pin(ctx context.Context, agent string, r app.PinRequest) (app.PinResult, error) {
	return decode[app.PinResult](ctx, c, call{route: web.RoutePin, args: []string{agent}, body: r})
}

// Unpin is POST /api/v1/agents/{agent}/unpin.
func (c *Client) Unpin(ctx context.Context, agent string, r app.UnpinRequest) (app.UnpinResult, error) {
	return decode[app.UnpinResult](ctx, c, call{route: web.RouteUnpin, args: []string{agent}, body: r})
}

// Forget is POST /api/v1/agents/{agent}/forget: a section or a line out
// of the agent's memory (a purge needs r.Confirm set to the agent id).
func (c *Client) Forget(ctx context.Context, agent string, r app.ForgetRequest) (app.ForgetResult, error) {
	return decode[app.ForgetResult](ctx, c, call{route: web.RouteForget, args: []string{agent}, body: r})
}

// Purge is POST /api/v1/purge: a text out of the whole home (a dry run
// says where it stands).
func (c *Client) Purge(ctx context.Context, r app.PurgeRequest) (app.PurgeResult, error) {
	return decode[app.PurgeResult](ctx, c, call{route: web.RoutePurge, body: r})
}

// Mine is POST /api/v1/mine: the whole hive, or r.Agent's directory.
func (c *Client) Mine(ctx context.Context, r app.MineRequest) (app.MineResult, error) {
	return decode[app.MineResult](ctx, c, call{route: web.RouteMine, body: r})
}

// Backups is GET /api/v1/backups (agent ""), or GET
// /api/v1/agents/{agent}/backups: the backups of every agent, or of one.
func (c *Client) Backups(ctx context.Context, agent string) ([]app.BackupInfo, error) {
	k := call{route: web.RouteBackups}
	if agent != "" {
		k = call{route: web.RouteAgentBackups, args: []string{agent}}
	}
	l, err := decode[web.BackupList](ctx, c, k)
	return l.Backups, err
}

// Backup is GET /api/v1/agents/{agent}/backups/{backup} (a name, or
// "latest"): the backup with its diff against the current file, and with
// its content when withContent is set.
func (c *Client) Backup(ctx context.Context, agent, backup string, withContent bool) (app.BackupDetail, error) {
	k := call{route: web.RouteBackup, args: []string{agent, backup}}
	if withContent {
		k.query = url.Values{"content": {"true"}}
	}
	return decode[app.BackupDetail](ctx, c, k)
}

// Restore is POST /api/v1/agents/{agent}/backups/{backup}/restore: it
// puts the backup back (the file it replaces is backed up first).
func (c *Client) Restore(ctx context.Context, agent, backup string) (app.RestoreResult, error) {
	return decode[app.RestoreResult](ctx, c, call{route: web.RouteRestore, args: []string{agent, backup}, body: struct{}{}})
}

// Settings is GET /api/v1/settings.
func (c *Client) Settings(ctx context.Context) (app.SettingsResult, error) {
	return decode[app.SettingsResult](ctx, c, call{route: web.RouteSettings})
}

// UpdateSettings is PATCH /api/v1/settings: it writes the given keys into
// config.toml and returns the settings now in force.
func (c *Client) UpdateSettings(ctx context.Context, p app.SettingsRequest) (app.SettingsResult, error) {
	return decode[app.SettingsResult](ctx, c, call{route: web.RouteUpdateSettings, body: p})
}
