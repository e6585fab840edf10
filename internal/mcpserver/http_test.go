package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// serveHTTP mounts HTTPHandler at /mcp on a loopback test server and
// returns the endpoint URL.
func serveHTTP(t testing.TB, d mcpserver.Deps, token string) string {
	t.Helper()
	if d.Now == nil {
		d.Now = func() time.Time { return fixedNow }
	}
	h, err := mcpserver.HTTPHandler(d, httpguard.Config{Addr: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// headerTransport adds fixed headers to every request, as MCP clients do
// with configured headers.
type headerTransport struct {
	hdr  map[string]string
	base http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// connectHTTP connects the SDK's streamable HTTP client to url.
func connectHTTP(t testing.TB, url string, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{hdr: hdr, base: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-http", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTPTools(t *testing.T) {
	a := newHome(t, testFiles, true)
	url := serveHTTP(t, mcpserver.Deps{App: a}, "")
	cs := connectHTTP(t, url, map[string]string{mcpserver.AgentHeader: "carol"})

	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 11 {
		t.Fatalf("list tools: %v, %d tools", err, len(res.Tools))
	}
	rem := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "Over HTTP: the cache key includes the tenant.", "heading": "cache key"})
	if rem.Agent != "carol" || rem.DrawersAdded != 1 {
		t.Fatalf("remember = %+v", rem)
	}
	hits := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "tenant cache key"})
	if len(hits.Hits) == 0 || hits.Hits[0].Agent != "carol" {
		t.Fatalf("search = %+v", hits)
	}
	d := ok[struct {
		Wing string `json:"wing"`
		Text string `json:"text"`
	}](t, cs, mcpserver.ToolWakeUp, nil)
	if d.Wing != "carol" || !strings.Contains(d.Text, "cache key") {
		t.Fatalf("wake-up = %+v", d)
	}
	fails(t, cs, mcpserver.ToolRemember, map[string]any{"text": "x", "agent": "alice"}, `writes only to agent "carol"`)
	fails(t, cs, mcpserver.ToolSearch, map[string]any{"query": "x", "results": 1000}, "results")
}

// mcpRequest sends one request to the MCP endpoint as a streamable-HTTP
// client does (Accept: JSON and event streams; Content-Type ct unless
// empty; the headers in hdr, "Host" naming the Host) and returns the
// status and the body.
func mcpRequest(ctx context.Context, t *testing.T, method, url, ct, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	if ct != "" {
		h["Content-Type"] = ct
	}
	maps.Copy(h, hdr)
	return apptest.Do(t, apptest.Request{Ctx: ctx, Method: method, URL: url, Body: body, Header: h})
}

// rawCall posts one tools/call to url (the stateless endpoint needs no
// initialize) and returns the HTTP status and, on 200, the tool result.
func rawCall(t *testing.T, url string, hdr map[string]string, tool string, args map[string]any) (int, string, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	status, b := mcpRequest(context.Background(), t, http.MethodPost, url, "application/json", string(body), hdr)
	if status != http.StatusOK {
		return status, string(b), nil
	}
	var msg struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return status, string(b), msg.Result
}

func TestHTTPIdentity(t *testing.T) {
	a := newHome(t, testFiles, true)
	open := serveHTTP(t, mcpserver.Deps{App: a}, "")
	bound := serveHTTP(t, mcpserver.Deps{App: a, Agent: "alice"}, "")
	own := serveHTTP(t, mcpserver.Deps{App: a, Agent: "alice", Scope: mcpserver.ScopeOwn}, "")
	cases := []struct {
		name      string
		url       string
		hdr       map[string]string
		query     string
		status    int
		wantAgent string // identity the status tool reports
		wantScope string
		wantBody  string // on errors
	}{
		{"unbound, no identity", open, nil, "", 200, "", "all", ""},
		{"header names the agent", open, map[string]string{mcpserver.AgentHeader: "bob"}, "", 200, "bob", "all", ""},
		{"query names the agent", open, nil, "?agent=bob", 200, "bob", "all", ""},
		{"header wins over query", open, map[string]string{mcpserver.AgentHeader: "bob"}, "?agent=alice", 200, "bob", "all", ""},
		{"client narrows the scope", open, map[string]string{mcpserver.AgentHeader: "bob", mcpserver.ScopeHeader: "own"}, "", 200, "bob", "own", ""},
		{"own without agent", open, nil, "?scope=own", 400, "", "", "scope own needs an agent"},
		{"bad agent id", open, map[string]string{mcpserver.AgentHeader: "../etc"}, "", 400, "", "", "invalid agent id"},
		{"bad scope", open, nil, "?agent=bob&scope=everything", 400, "", "", "want own or all"},
		{"bound: default agent", bound, nil, "", 200, "alice", "all", ""},
		{"bound: same agent", bound, map[string]string{mcpserver.AgentHeader: "alice"}, "", 200, "alice", "all", ""},
		{"bound: other agent refused", bound, map[string]string{mcpserver.AgentHeader: "bob"}, "", 403, "", "", `bound to agent "alice"`},
		{"own: widening refused", own, nil, "?scope=all", 403, "", "", "serves scope own"},
		{"own: default", own, nil, "", 200, "alice", "own", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, res := rawCall(t, c.url+c.query, c.hdr, mcpserver.ToolStatus, nil)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if status != 200 {
				if !strings.Contains(body, c.wantBody) {
					t.Fatalf("body %q, want %q", body, c.wantBody)
				}
				return
			}
			sc, _ := res["structuredContent"].(map[string]any)
			agent, _ := sc["agent"].(string)
			if agent != c.wantAgent || sc["scope"] != c.wantScope {
				t.Fatalf("identity %q/%v, want %q/%q (%s)", agent, sc["scope"], c.wantAgent, c.wantScope, body)
			}
		})
	}

	// The identity applies to writes: remember over the query parameter
	// lands in bob's file.
	_, body, res := rawCall(t, open+"?agent=bob", nil, mcpserver.ToolRemember, map[string]any{"text": "written over http", "heading": "http"})
	if res["isError"] == true || !strings.Contains(apptest.ReadMemory(t, a, "bob"), "## 2026-11-29 — http\nwritten over http") {
		t.Fatalf("remember over http: %s", body)
	}
}

func TestHTTPGuard(t *testing.T) {
	a := newHome(t, testFiles, true)
	cases := []struct {
		name   string
		token  string
		hdr    map[string]string
		status int
	}{
		{"no token needed on loopback", "", nil, 200},
		{"token missing", "s3cret", nil, 401},
		{"token wrong", "s3cret", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"token right", "s3cret", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"cross-origin browser request", "", map[string]string{"Origin": "http://evil.test"}, 403},
		{"cross-site without origin", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := serveHTTP(t, mcpserver.Deps{App: a}, c.token)
			status, body, _ := rawCall(t, url, c.hdr, mcpserver.ToolStatus, nil)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
		})
	}

	t.Run("DNS rebinding: foreign Host on loopback", func(t *testing.T) {
		url := serveHTTP(t, mcpserver.Deps{App: a}, "")
		status, _ := mcpRequest(context.Background(), t, http.MethodPost, url, "application/json",
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Host": "attacker.example"})
		// The guard refuses it (421, as the web UI and the manager's
		// routes do) before the SDK's own check (403) sees it.
		if status != http.StatusMisdirectedRequest {
			t.Fatalf("status %d, want 421", status)
		}
	})

	for _, c := range []struct {
		name  string
		deps  mcpserver.Deps
		guard httpguard.Config
		want  string
	}{
		{"beyond loopback without token", mcpserver.Deps{App: a}, httpguard.Config{Addr: "0.0.0.0:7777"}, "needs a token"},
		{"bad deps", mcpserver.Deps{App: a, Scope: "own"}, httpguard.Config{Addr: "127.0.0.1:7777"}, "scope own needs an agent"},
		{"no app", mcpserver.Deps{}, httpguard.Config{Addr: "127.0.0.1:7777"}, "no app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mcpserver.HTTPHandler(c.deps, c.guard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("HTTPHandler = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := mcpserver.HTTPHandler(mcpserver.Deps{App: a}, httpguard.Config{Addr: "0.0.0.0:7777", Token: "t"}); err != nil {
		t.Fatalf("beyond loopback with a token: %v", err)
	}
}

// TestHTTPMalformedRequestsAreRefused: the streamable HTTP endpoint with malformed requests:
// each is refused with a 4xx (or a JSON-RPC error) that says why, never a
// 500, a hang, or a success.
func TestHTTPMalformedRequestsAreRefused(t *testing.T) {
	a := newHome(t, testFiles, true)
	url := serveHTTP(t, mcpserver.Deps{App: a}, "")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_status","arguments":{}}}`
	cases := []struct {
		name, method, target, body, ct string
		hdr                            map[string]string
		want                           int    // HTTP status; 200 means a JSON-RPC error is expected
		msg                            string // in the body
	}{
		{"GET", "GET", "", "", "", nil, 405, ""},
		{"DELETE", "DELETE", "", "", "", nil, 405, ""},
		{"PUT", "PUT", "", call, "application/json", nil, 405, ""},
		{"not JSON", "POST", "", "{not json", "application/json", nil, 400, ""},
		{"empty body", "POST", "", "", "application/json", nil, 400, ""},
		{"text/plain", "POST", "", call, "text/plain", nil, 415, ""},
		{"body over 1 MiB", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"` + strings.Repeat("a", 2<<20) + `"}}}`, "application/json", nil, 413, ""},
		{"agent . in query", "POST", "?agent=.", call, "application/json", nil, 400, "invalid agent id"},
		{"agent .. in query", "POST", "?agent=..", call, "application/json", nil, 400, "invalid agent id"},
		{"agent slash in query", "POST", "?agent=a%2Fb", call, "application/json", nil, 400, "invalid agent id"},
		{"agent invalid utf8", "POST", "?agent=%FF", call, "application/json", nil, 400, "invalid agent id"},
		{"agent upper header", "POST", "", call, "application/json", map[string]string{mcpserver.AgentHeader: "ALICE"}, 400, "invalid agent id"},
		{"scope upper", "POST", "?agent=bob&scope=OWN", call, "application/json", nil, 400, "want own or all"},
		{"unknown tool", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_delete","arguments":{}}}`, "application/json", nil, 200, "memory_delete"},
		{"arguments array", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":["x"]}}`, "application/json", nil, 200, ""},
		{"unknown method", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"memory/drop","params":{}}`, "application/json", nil, 200, "memory/drop"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			status, b := mcpRequest(ctx, t, c.method, url+c.target, c.ct, c.body, c.hdr)
			if c.want == 200 {
				// A JSON-RPC error (or a tool error), not a result.
				if status >= 500 || (status == 200 && !strings.Contains(string(b), `"error"`) && !strings.Contains(string(b), `"isError":true`)) {
					t.Fatalf("= %d %s; want a JSON-RPC or tool error", status, b)
				}
			} else if status != c.want {
				t.Fatalf("= %d, want %d: %.300s", status, c.want, b)
			}
			if !strings.Contains(string(b), c.msg) {
				t.Fatalf("body %.300s does not mention %q", b, c.msg)
			}
		})
	}
}
