// Package httpguard protects hivemem's HTTP endpoints (API, web UI, MCP):
// a bearer token required whenever the server listens beyond loopback (and
// for state-changing requests when a token is configured), a same-origin
// check against cross-site requests, and capped request bodies.
package httpguard

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxBody caps request bodies.
const DefaultMaxBody = 1 << 20

// Config says how to guard a handler.
type Config struct {
	Addr    string // the listen address, to tell loopback from the rest
	Token   string // required bearer token ("" = none; refused when Addr is not loopback)
	MaxBody int64  // 0 = DefaultMaxBody
}

// IsLoopback reports whether a listen address only accepts local clients.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Validate refuses a configuration that would expose memory without a token.
func (c Config) Validate() error {
	if !IsLoopback(c.Addr) && c.Token == "" {
		return fmt.Errorf("listening on %s (not loopback) needs a token: set manager.token or HIVEMEM_MANAGER_TOKEN", c.Addr)
	}
	return nil
}

// Wrap returns h behind the guard: token (from "Authorization: Bearer" or
// the hivemem_token cookie) whenever one is configured, an Origin that
// matches the Host on every state-changing request, and MaxBody.
func Wrap(c Config, h http.Handler) http.Handler {
	max := c.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.Token != "" && !Authorized(r, c.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hivemem"`)
			http.Error(w, "unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		if err := CheckOrigin(r); err != nil {
			http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		h.ServeHTTP(w, r)
	})
}

// Authorized checks the bearer token in constant time.
func Authorized(r *http.Request, token string) bool {
	got := ""
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		got = strings.TrimPrefix(a, "Bearer ")
	} else if ck, err := r.Cookie("hivemem_token"); err == nil {
		got = ck.Value
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// CheckOrigin refuses cross-origin requests: any request carrying an Origin
// (browsers send one on cross-site fetches and on every POST) must come from
// the same host it is addressed to; state-changing requests from browsers
// without an Origin are refused when Sec-Fetch-Site says cross-site.
func CheckOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" && !isStateChanging(r.Method) {
		if isStateChanging(r.Method) && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			return errors.New("cross-site request")
		}
		if origin == "" {
			return nil
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("bad Origin %q", origin)
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("cross-origin request from %s", origin)
	}
	return nil
}

func isStateChanging(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}
