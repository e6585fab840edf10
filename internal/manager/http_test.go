package manager

// The manager's own HTTP server and routes.

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestOwnRoutesRefuseForeignHost: on a loopback listener, the
// manager's own status routes (/api/v1/manager, and /api/v1/status when
// no UI is mounted) answer a request whose Host is a foreign name — what
// a DNS-rebinding page sends — with the full status: home path, agent
// names and sizes, recent errors, index statistics. httpguard.Wrap compares
// the Origin with the Host (equal under rebinding) and never checks the
// Host itself; the web UI (421) and the MCP SDK (403) do.
func TestOwnRoutesRefuseForeignHost(t *testing.T) {
	a := openHome(t, "", map[string]string{"good": goodFile})
	m, err := New(Options{App: a, HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := start(t, m)
	_, port, _ := net.SplitHostPort(addr)
	for _, path := range []string{"/api/v1/manager", "/api/v1/status"} {
		for _, host := range []string{"rebind.attacker.example:" + port, "127.0.0.1.nip.io:" + port} {
			req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			req.Header.Set("Origin", "http://"+host)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Errorf("GET %s with Host %s: %d, want a refusal; it shows %.100q", path, host, resp.StatusCode, body)
			}
		}
	}
	// The loopback names keep working.
	for _, host := range []string{addr, "localhost:" + port} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/manager", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET /api/v1/manager with Host %s: %d", host, resp.StatusCode)
		}
	}
}

// TestServerTimesOutIdleConnections: the server cuts slow headers
// (ReadHeaderTimeout), but has neither IdleTimeout nor ReadTimeout, and
// net/http then waits for a keep-alive connection's next request with no
// deadline at all. A client (on a token-protected public address: before
// any token check, e.g. after one GET /healthz, which is public) can open
// connections, make one request on each and leave them idle; each holds a
// descriptor and a goroutine until the process exits. IdleTimeout bounds
// that without touching the event streams (ReadTimeout would cancel them).
func TestServerTimesOutIdleConnections(t *testing.T) {
	a := openHome(t, "", nil)
	m, err := New(Options{App: a, HTTP: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClaim(a.Home, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	m.claim = c
	hs, err := m.startHTTP(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer hs.ln.Close()
	if hs.srv.ReadHeaderTimeout <= 0 && hs.srv.ReadTimeout <= 0 {
		t.Errorf("no ReadHeaderTimeout: slow headers hold connections")
	}
	if hs.srv.IdleTimeout <= 0 && hs.srv.ReadTimeout <= 0 {
		t.Errorf("IdleTimeout %v, ReadTimeout %v: idle keep-alive connections are kept forever", hs.srv.IdleTimeout, hs.srv.ReadTimeout)
	}
	if hs.srv.WriteTimeout > 0 {
		t.Errorf("WriteTimeout %v would cut the event streams", hs.srv.WriteTimeout)
	}
	if !strings.HasPrefix(hs.ln.Addr().String(), "127.0.0.1:") {
		t.Errorf("listening on %s", hs.ln.Addr())
	}
}
