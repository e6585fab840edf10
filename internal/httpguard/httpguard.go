// Package httpguard protects hivemem's HTTP endpoints (API, web UI, MCP):
// a bearer token required whenever the server listens beyond loopback (and
// for state-changing requests when a token is configured), a Host check
// against DNS rebinding on loopback, a same-origin check against cross-site
// requests, and capped request bodies.
package httpguard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
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

// CheckHost refuses a request addressed to a name this server does not
// answer to. On a loopback listener that is any Host but a loopback name
// (see LoopbackHost): a page on a foreign name that resolves to 127.0.0.1
// (DNS rebinding) sends its own name as Host, and as Origin too, so the
// Origin check alone lets it read. Beyond loopback any Host passes: the
// token, required there, is the protection. Refuse with
// http.StatusMisdirectedRequest.
func (c Config) CheckHost(r *http.Request) error {
	if IsLoopback(c.Addr) && !LoopbackHost(r.Host) {
		return fmt.Errorf("host %q is not a loopback name: this server listens on %s (DNS-rebinding protection)", r.Host, c.Addr)
	}
	return nil
}

// LoopbackHost reports whether a Host header names this machine: a
// loopback IP, "localhost" or a name under ".localhost".
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Wrap returns h behind the guard: a Host this server answers to (see
// CheckHost), the token (from "Authorization: Bearer" or the CookieName
// cookie) whenever one is configured, an Origin that matches the Host on
// every state-changing request, and MaxBody.
func Wrap(c Config, h http.Handler) http.Handler {
	max := c.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.CheckHost(r); err != nil {
			http.Error(w, err.Error(), http.StatusMisdirectedRequest)
			return
		}
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

// CookieName is the cookie that the web UI's login page sets and that
// Authorized accepts in place of a bearer token.
const CookieName = "hivemem_token"

// CookieValue is what the login cookie carries for token: not the token
// itself (which then never sits in the browser's cookie store), and only
// characters a cookie value can hold (net/http drops semicolons, double
// quotes, backslashes and non-ASCII bytes from Set-Cookie, so a token
// holding any of them could never log in): the unpadded base64url of an
// HMAC-SHA256 keyed by the token over a fixed label.
func CookieValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("hivemem login cookie v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Authorized checks the credentials of r in constant time: the bearer
// token, else the CookieName cookie, which holds CookieValue(token) (or
// the token itself, as cookies set before CookieValue existed do).
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	if got, ok := bearer(r.Header.Get("Authorization")); ok {
		return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
	}
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return false
	}
	got := []byte(ck.Value)
	return subtle.ConstantTimeCompare(got, []byte(CookieValue(token))) == 1 ||
		subtle.ConstantTimeCompare(got, []byte(token)) == 1
}

// bearer returns the credentials of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive (RFC 9110 §11.1) and separated
// from the token by one or more spaces; the token is compared as it is.
func bearer(header string) (string, bool) {
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(rest, " "), true
}

// CheckOrigin refuses cross-origin requests: any request carrying an Origin
// (browsers send one on cross-site fetches and on every POST) must come from
// the origin it is addressed to, the same scheme (http, or https over TLS)
// and host; a state-changing request is refused when the browser says it
// is cross-site (Sec-Fetch-Site), whatever its Origin.
func CheckOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if isStateChanging(r.Method) && strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
		return errors.New("cross-site request (Sec-Fetch-Site: cross-site)")
	}
	if origin == "" || origin == "null" && !isStateChanging(r.Method) {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("bad Origin %q", origin)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Host, r.Host) || !strings.EqualFold(u.Scheme, scheme) {
		return fmt.Errorf("cross-origin request from %s (this server is %s://%s)", origin, scheme, r.Host)
	}
	return nil
}

func isStateChanging(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}
