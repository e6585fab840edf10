package cli

// `hivemem run`'s HTTP server as production wires it
// (serveHandlers: MCP at /mcp, the web UI and the whole API at /, the
// manager's /healthz), attacked over real TCP: forged Host and Origin headers, missing
// and wrong tokens, oversized bodies, many live event streams at shutdown.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/wiring"
)

const runMemory = "# Memory — Alice (alice)\n\n## 📌 Durable facts (pinned — never condensed)\n- the deploy key lives in vault\n## Recent\n\n## 2026-11-20 — fixed flaky login test\nThe session cookie expiry skew made the login test flaky.\n"

// startRun starts a manager with the production mounts on 127.0.0.1:0 and
// returns its address and a stop function that cancels Run and returns
// its error (or an error if it does not return within 20 s).
func startRun(t *testing.T, configTOML string) (addr string, stop func() error) {
	t.Helper()
	addr, stop, _ = startRunHome(t, configTOML, nil)
	return addr, stop
}

// startRunHome is startRun that also returns the home, and calls
// prepare on it before the manager starts.
func startRunHome(t *testing.T, configTOML string, prepare func(h home.Home)) (addr string, stop func() error, h home.Home) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(dir, "no-model"))
	h = hometest.NewWith(t, configTOML, map[string]string{"alice": runMemory})
	if prepare != nil {
		prepare(h)
	}
	a, err := wiring.Open(t.Context(), wiring.Options{Home: h.Root, LongRunning: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ready := make(chan string, 1)
	m, err := manager.New(manager.Options{App: a, HTTP: "127.0.0.1:0", Handler: serveHandlers, Version: "test",
		Ready: func(addr string) { ready <- addr }})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop = apptest.Serve(t, ready, m.Run)
	return addr, stop, h
}

// stalledConns opens n connections to addr that each send req and then
// neither write nor read: with a small read buffer, so that a server
// streaming to them fills it soon. They are closed when the test ends.
func stalledConns(t *testing.T, addr string, n int, req string) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
}

type runReq struct {
	method, path string
	host         string
	hdr          map[string]string
	body         string
}

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"runtest","version":"0"}}}`

func runDo(t *testing.T, addr string, r runReq) (int, string) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, "http://"+addr+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	if strings.HasPrefix(r.path, "/mcp") {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// TestRunRefusesForgedHost: a page on a foreign name that resolves to
// 127.0.0.1 (DNS rebinding) reaches the loopback server with its own name
// in Host. The web UI answers 421 and the MCP SDK 403, but the manager's
// own GET /api/v1/manager (and GET /api/v1/status when no UI is mounted)
// is wrapped by httpguard.Wrap alone, which checks the Origin against the
// Host — equal under rebinding — and never the Host itself: it answers 200
// with the home's path, every agent's name, sizes, errors and the index
// statistics. Every route but the public /healthz must refuse a foreign
// Host on a loopback listener.
func TestRunRefusesForgedHost(t *testing.T) {
	addr, _ := startRun(t, "")
	_, port, _ := net.SplitHostPort(addr)
	evil := "rebind.attacker.example:" + port
	for _, r := range []runReq{
		{method: "GET", path: "/api/v1/manager"},
		{method: "GET", path: "/api/v1/status"},
		{method: "GET", path: "/api/v1/agents"},
		{method: "GET", path: "/api/v1/agents/alice/memory?format=raw"},
		{method: "GET", path: "/api/v1/search?q=login"},
		{method: "GET", path: "/"},
		{method: "POST", path: "/mcp", body: mcpInit},
		{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Origin": "http://" + evil}},
		{method: "GET", path: "/api/v1/manager", hdr: map[string]string{"Origin": "http://" + evil}},
	} {
		for _, host := range []string{evil, "localhost.attacker.example:" + port, "127.0.0.1.nip.io:" + port} {
			r.host = host
			code, body := runDo(t, addr, r)
			if code < 400 {
				t.Errorf("%s %s with Host %s (Origin %q): %d, want a refusal; body starts %.120q", r.method, r.path, host, r.hdr["Origin"], code, body)
			}
		}
	}
	// Loopback names still work.
	for _, host := range []string{addr, "localhost:" + port, "LOCALHOST:" + port} {
		if code, body := runDo(t, addr, runReq{method: "GET", path: "/api/v1/manager", host: host}); code != 200 {
			t.Errorf("GET /api/v1/manager with Host %s: %d %.200s", host, code, body)
		}
	}
	if code, _ := runDo(t, addr, runReq{method: "GET", path: "/healthz", host: evil}); code != 200 && code < 400 {
		t.Errorf("healthz: %d", code)
	}
}

// TestRunRefusesForgedOrigin: cross-origin and cross-site requests are
// refused on every state-changing route and on MCP.
func TestRunRefusesForgedOrigin(t *testing.T) {
	addr, _ := startRun(t, "")
	for _, r := range []runReq{
		{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Origin": "http://evil.example"}},
		{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Origin": "null"}},
		{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Origin": "http://" + addr + ".evil.example"}},
		{method: "PATCH", path: "/api/v1/settings", body: `{"enabled":false}`, hdr: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}},
		{method: "POST", path: "/api/v1/agents/alice/condense", body: `{"dry_run":true}`, hdr: map[string]string{"Origin": "https://" + addr + "@evil.example", "Content-Type": "application/json"}},
		{method: "POST", path: "/api/v1/agents/alice/condense", body: `{"dry_run":true}`, hdr: map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}},
		{method: "POST", path: "/login", body: "token=x", hdr: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}},
		{method: "GET", path: "/api/v1/manager", hdr: map[string]string{"Origin": "http://evil.example"}},
		{method: "GET", path: "/api/v1/agents", hdr: map[string]string{"Origin": "http://evil.example"}},
	} {
		if code, body := runDo(t, addr, r); code != http.StatusForbidden {
			t.Errorf("%s %s with %v: %d, want 403; %.200s", r.method, r.path, r.hdr, code, body)
		}
	}
	// Same origin works.
	if code, body := runDo(t, addr, runReq{method: "POST", path: "/mcp", body: mcpInit, hdr: map[string]string{"Origin": "http://" + addr}}); code != 200 {
		t.Errorf("same-origin MCP initialize: %d %.200s", code, body)
	}
}

// TestRunRequiresExactToken: with manager.token set, MCP, the API and the
// manager's status need it (bearer header or the login cookie); a missing,
// wrong, prefixed or suffixed token is 401; /healthz, /login and /static
// stay public.
func TestRunRequiresExactToken(t *testing.T) {
	const tok = "tok-4f9a1c-0b7e3d52"
	addr, _ := startRun(t, "[manager]\ntoken = \""+tok+"\"\n")
	routes := []runReq{
		{method: "POST", path: "/mcp", body: mcpInit},
		{method: "GET", path: "/api/v1/manager"},
		{method: "GET", path: "/api/v1/status"},
		{method: "GET", path: "/api/v1/agents/alice/memory?format=raw"},
		{method: "GET", path: "/api/v1/events?n=5"},
		{method: "PATCH", path: "/api/v1/settings", body: `{"enabled":false}`, hdr: map[string]string{"Content-Type": "application/json"}},
	}
	bad := []map[string]string{
		nil,
		{"Authorization": "Bearer "},
		{"Authorization": "Bearer wrong"},
		{"Authorization": "Bearer " + tok + "x"},
		{"Authorization": "Bearer " + tok[:len(tok)-1]},
		{"Authorization": "Basic " + tok},
		{"Authorization": "Bearer" + tok},
		{"Authorization": tok},
		{"Cookie": "hivemem_token=wrong"},
		{"Cookie": "hivemem_token="},
		{"X-Hivemem-Token": tok},
	}
	for _, r := range routes {
		for _, h := range bad {
			r.hdr = mergeHeaders(r.hdr, h)
			if code, body := runDo(t, addr, r); code != http.StatusUnauthorized {
				t.Errorf("%s %s with %v: %d, want 401; %.200s", r.method, r.path, h, code, body)
			}
		}
	}
	for _, r := range routes[:5] {
		// The scheme in any case, then one or more spaces (RFC 9110).
		for _, h := range []map[string]string{{"Authorization": "Bearer " + tok}, {"Authorization": "bearer " + tok}, {"Authorization": "BEARER  " + tok}, {"Cookie": "hivemem_token=" + tok}} {
			r.hdr = h
			if code, body := runDo(t, addr, r); code != 200 {
				t.Errorf("%s %s with %v: %d, want 200; %.200s", r.method, r.path, h, code, body)
			}
		}
	}
	for _, p := range []string{"/healthz", "/login"} {
		if code, _ := runDo(t, addr, runReq{method: "GET", path: p}); code != 200 {
			t.Errorf("GET %s without a token: %d, want 200", p, code)
		}
	}
	// A page without the token redirects to the login form.
	if code, _ := runDo(t, addr, runReq{method: "GET", path: "/agents/alice"}); code != http.StatusSeeOther {
		t.Errorf("GET /agents/alice without a token: %d, want 303 to /login", code)
	}
}

func mergeHeaders(base, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		if k == "Content-Type" {
			out[k] = v
		}
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// TestRunRefusesOversizedBodies: bodies over the limits are refused with
// 413 (or 400), never processed, never a 500, and the server goes on.
func TestRunRefusesOversizedBodies(t *testing.T) {
	addr, _ := startRun(t, "")
	big := strings.Repeat("x", 3<<20)
	for _, r := range []runReq{
		{method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + big + `"}}`},
		{method: "PATCH", path: "/api/v1/settings", body: `{"enabled":false,"x":"` + big + `"}`, hdr: map[string]string{"Content-Type": "application/json"}},
		{method: "POST", path: "/api/v1/agents/alice/condense", body: `{"dry_run":true,"pad":"` + big + `"}`, hdr: map[string]string{"Content-Type": "application/json"}},
		{method: "POST", path: "/login", body: "token=" + big, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
	} {
		code, body := runDo(t, addr, r)
		if code != http.StatusRequestEntityTooLarge && code != http.StatusBadRequest {
			t.Errorf("%s %s with a %d-byte body: %d, want 413; %.200s", r.method, r.path, len(r.body), code, body)
		}
	}
	if code, _ := runDo(t, addr, runReq{method: "POST", path: "/mcp", body: mcpInit}); code != 200 {
		t.Errorf("MCP after the oversized bodies: %d", code)
	}
}

// TestRunStopsWithManyEventStreams: 200 live SSE clients (plus
// MCP requests in flight) when the manager is told to stop: Run returns
// without error, and every stream ends rather than hanging.
func TestRunStopsWithManyEventStreams(t *testing.T) {
	addr, stop := startRun(t, "")
	const n = 200
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var bodies []io.ReadCloser
	for i := range n {
		req, err := http.NewRequest("GET", "http://"+addr+"/api/v1/events/stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("stream %d: status %d", i, resp.StatusCode)
		}
		// The stream's preamble proves the handler is running.
		br := bufio.NewReader(resp.Body)
		if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
			t.Fatalf("stream %d: first line %q, %v", i, line, err)
		}
		bodies = append(bodies, resp.Body)
	}
	// MCP requests keep coming while the server stops.
	stopMCP := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c := &http.Client{Timeout: 10 * time.Second}
			for {
				select {
				case <-stopMCP:
					return
				default:
				}
				req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(mcpInit))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := c.Do(req)
				if err != nil {
					return // the server is gone: fine
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
			}
		})
	}
	if err := stop(); err != nil {
		t.Errorf("Run after stop: %v", err)
	}
	close(stopMCP)
	wg.Wait()
	ended := make(chan int, n)
	for i, b := range bodies {
		go func() {
			_, _ = io.Copy(io.Discard, b)
			b.Close()
			ended <- i
		}()
	}
	for range n {
		select {
		case <-ended:
		case <-time.After(20 * time.Second):
			t.Fatal("an event stream is still open 20 s after Run returned")
		}
	}
	// Nothing listens any more.
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Run returned", addr)
	}
}

// TestRunCutsSlowHeaders: a client that opens a connection and sends a
// request line but never finishes its headers is cut off by the server
// (ReadHeaderTimeout) — checked here only in that the server goes on
// serving others meanwhile and stops promptly with such clients attached.
func TestRunCutsSlowHeaders(t *testing.T) {
	addr, stop := startRun(t, "")
	stalledConns(t, addr, 50, fmt.Sprintf("GET /api/v1/agents HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr))
	if code, body := runDo(t, addr, runReq{method: "GET", path: "/api/v1/agents"}); code != 200 {
		t.Errorf("GET /api/v1/agents beside 50 slow clients: %d %.200s", code, body)
	}
	if err := stop(); err != nil {
		t.Errorf("Run with slow clients attached: %v", err)
	}
}

// TestRunLoginWithOddTokens: manager.token is any string the config
// accepts, and the login page stores it as the hivemem_token cookie value
// verbatim. net/http drops the bytes a cookie value cannot hold (';', '"',
// '\\', non-ASCII, control characters) from Set-Cookie, so after a
// successful login the browser sends back a different value and every
// page bounces back to /login. Likewise a token with surrounding spaces
// can never match: the login form trims what is typed, and header values
// arrive trimmed. Either such tokens are refused when the config loads,
// or the cookie must carry something that round-trips.
//
// The fix does both: the cookie carries a cookie-safe value derived from
// the token, and a token with surrounding whitespace — which no bearer
// header can carry, so the case below could never pass as first written —
// is refused when the config loads, with an error that names the key and
// not the token.
func TestRunLoginWithOddTokens(t *testing.T) {
	for _, tok := range []string{
		"plain-token-1234",
		"semi;colon-token",
		`quote"token-long`,
		`back\slash-token`,
		"pässwörd-token",
		"with space token",
		"comma,token-long",
		" padded-token ",
	} {
		t.Run(tok, func(t *testing.T) {
			if strings.TrimSpace(tok) != tok {
				h := home.Home{Root: filepath.Join(t.TempDir(), "home")}
				if err := h.Init(); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(h.ConfigPath(), []byte(fmt.Sprintf("[manager]\ntoken = %q\n", tok)), 0o644); err != nil {
					t.Fatal(err)
				}
				a, err := wiring.Open(t.Context(), wiring.Options{Home: h.Root})
				if err == nil {
					a.Close()
				}
				if err == nil || !strings.Contains(err.Error(), "manager.token") || strings.Contains(err.Error(), strings.TrimSpace(tok)) {
					t.Errorf("token %q: opening the home: %v, want an error naming manager.token (and not showing the token)", tok, err)
				}
				return
			}
			addr, _ := startRun(t, fmt.Sprintf("[manager]\ntoken = %q\n", tok))
			jar, err := cookiejar.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Jar: jar, Timeout: 20 * time.Second}
			resp, err := client.PostForm("http://"+addr+"/login", url.Values{"token": {tok}, "next": {"/api/v1/agents"}})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"agents"`) && !strings.Contains(string(body), `alice`) {
				t.Errorf("token %q: log in, then follow to /api/v1/agents with the cookie: %d %.150q", tok, resp.StatusCode, body)
			}
			code, _ := apptest.Do(t, apptest.Request{URL: "http://" + addr + "/api/v1/agents", Header: map[string]string{"Authorization": "Bearer " + tok}})
			if code != 200 {
				t.Errorf("token %q as a bearer header: %d", tok, code)
			}
		})
	}
}

// TestRunStopsWithStalledStreams: event-stream clients that
// never read (their TCP windows fill, and the handlers block in Write)
// must not keep the server from stopping.
func TestRunStopsWithStalledStreams(t *testing.T) {
	pad := strings.Repeat("p", 4096)
	addr, stop, _ := startRunHome(t, "", func(h home.Home) {
		log := eventlog.Open(h.LogPath())
		for i := range 2000 {
			if err := log.Append(eventlog.Event{Kind: "mine", Agent: "alice", Data: map[string]any{"i": i, "pad": pad}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	stalledConns(t, addr, 20, fmt.Sprintf("GET /api/v1/events/stream?from=0 HTTP/1.1\r\nHost: %s\r\n\r\n", addr))
	// The server goes on answering others.
	if code, body := runDo(t, addr, runReq{method: "GET", path: "/api/v1/events?n=1"}); code != 200 {
		t.Errorf("GET /api/v1/events beside 20 stalled streams: %d %.200s", code, body)
	}
	if err := stop(); err != nil {
		t.Errorf("Run with 20 stalled event streams: %v", err)
	}
}
