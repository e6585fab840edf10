package manager

// The manager's own HTTP server and routes.

import (
	"strings"
	"testing"
)

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
	c, err := NewClaim(a.Home(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	m.claim = c
	hs, err := m.startHTTP()
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
