package httpguard

// The guard's Origin, Host and token checks.

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func guardServe(c Config, method, host string, hdr map[string]string, body string) int {
	h := Wrap(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			var mbe *http.MaxBytesError
			if _, err := io.ReadAll(r.Body); errors.As(err, &mbe) {
				http.Error(w, "too large", http.StatusRequestEntityTooLarge)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	req := httptest.NewRequest(method, "http://"+host+"/x", strings.NewReader(body))
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestCrossOriginRefusedHoweverSpelled: cross-origin requests are refused, however the
// Origin is spelled; same-origin and Origin-less (non-browser) requests
// pass.
func TestCrossOriginRefusedHoweverSpelled(t *testing.T) {
	c := Config{Addr: "127.0.0.1:7777"}
	const host = "127.0.0.1:7777"
	for _, tc := range []struct {
		method string
		hdr    map[string]string
		want   int
	}{
		{"POST", nil, 200},
		{"GET", nil, 200},
		{"POST", map[string]string{"Origin": "http://127.0.0.1:7777"}, 200},
		{"POST", map[string]string{"Origin": "http://127.0.0.1:7778"}, 403},
		{"POST", map[string]string{"Origin": "http://127.0.0.1"}, 403},
		{"POST", map[string]string{"Origin": "http://127.0.0.1:7777.evil.example"}, 403},
		{"POST", map[string]string{"Origin": "http://evil.example@127.0.0.1:7777"}, 200}, // userinfo is not part of an origin, but the host matches
		{"POST", map[string]string{"Origin": "http://127.0.0.1:7777@evil.example"}, 403},
		{"POST", map[string]string{"Origin": "null"}, 403},
		{"POST", map[string]string{"Origin": "not a url"}, 403},
		{"POST", map[string]string{"Origin": "http://[::1]:7777"}, 403},
		{"DELETE", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"PATCH", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
		{"GET", map[string]string{"Origin": "http://evil.example"}, 403},
		{"GET", map[string]string{"Sec-Fetch-Site": "cross-site"}, 200}, // a plain navigation
	} {
		if got := guardServe(c, tc.method, host, tc.hdr, ""); got != tc.want {
			t.Errorf("%s with %v: %d, want %d", tc.method, tc.hdr, got, tc.want)
		}
	}
}

// TestForeignHostOnLoopbackRefused: Wrap guards the MCP endpoint and
// the manager's status routes. On a loopback listener without a token its
// only defence against a DNS-rebinding page is the Origin check, which
// compares the Origin with the Host — and under rebinding both name the
// attacker's domain, so they match. Wrap must refuse a Host that is not a
// loopback name when Addr is loopback (as the web handler does with 421).
func TestForeignHostOnLoopbackRefused(t *testing.T) {
	c := Config{Addr: "127.0.0.1:7777"}
	for _, host := range []string{"rebind.attacker.example:7777", "127.0.0.1.nip.io:7777", "localhost.attacker.example:7777"} {
		for _, method := range []string{"GET", "POST"} {
			hdr := map[string]string{"Origin": "http://" + host}
			if got := guardServe(c, method, host, hdr, "{}"); got < 400 {
				t.Errorf("%s with Host and Origin %s on a loopback listener: %d, want a refusal", method, host, got)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:7777", "localhost:7777", "[::1]:7777"} {
		if got := guardServe(c, "GET", host, nil, ""); got != 200 {
			t.Errorf("GET with Host %s: %d, want 200", host, got)
		}
	}
}

// TestOnlyExactTokenPasses: only the exact token passes, in the header or the
// cookie; near misses do not.
func TestOnlyExactTokenPasses(t *testing.T) {
	const tok = "s3cret-token"
	c := Config{Addr: "0.0.0.0:7777", Token: tok}
	const host = "203.0.113.5:7777"
	for _, tc := range []struct {
		hdr  map[string]string
		want int
	}{
		{nil, 401},
		{map[string]string{"Authorization": "Bearer " + tok}, 200},
		{map[string]string{"Cookie": "hivemem_token=" + tok}, 200},
		{map[string]string{"Authorization": "Bearer " + tok + " "}, 401},
		{map[string]string{"Authorization": "Bearer " + strings.ToUpper(tok)}, 401},
		{map[string]string{"Authorization": "Bearer " + tok[:5]}, 401},
		{map[string]string{"Authorization": "Bearer " + tok + tok}, 401},
		{map[string]string{"Authorization": "Bearer"}, 401},
		{map[string]string{"Authorization": "Bearer wrong", "Cookie": "hivemem_token=" + tok}, 401},
		{map[string]string{"Authorization": tok}, 401},
		{map[string]string{"Cookie": "hivemem_token=" + tok + "x"}, 401},
	} {
		if got := guardServe(c, "GET", host, tc.hdr, ""); got != tc.want {
			t.Errorf("token %v: %d, want %d", tc.hdr, got, tc.want)
		}
	}
	// A token does not lift the Origin check.
	hdr := map[string]string{"Authorization": "Bearer " + tok, "Origin": "http://evil.example"}
	if got := guardServe(c, "POST", host, hdr, "{}"); got != 403 {
		t.Errorf("right token, foreign Origin: %d, want 403", got)
	}
}

// TestBodyOverCapFailsToRead: bodies over MaxBody fail to read.
func TestBodyOverCapFailsToRead(t *testing.T) {
	c := Config{Addr: "127.0.0.1:7777", MaxBody: 1024}
	if got := guardServe(c, "POST", "127.0.0.1:7777", nil, strings.Repeat("x", 2048)); got != http.StatusRequestEntityTooLarge {
		t.Errorf("2 KiB body over a 1 KiB cap: %d, want 413", got)
	}
	if got := guardServe(c, "POST", "127.0.0.1:7777", nil, strings.Repeat("x", 1000)); got != 200 {
		t.Errorf("1000-byte body under a 1 KiB cap: %d, want 200", got)
	}
}
