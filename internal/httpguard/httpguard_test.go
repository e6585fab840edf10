package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:7777": true, "localhost:1": true, "[::1]:2": true, "0.0.0.0:7777": false, ":7777": false, "10.0.0.5:80": false} {
		err := Config{Addr: addr}.Validate()
		if (err == nil) != ok {
			t.Errorf("Validate(%s) = %v", addr, err)
		}
		if err := (Config{Addr: addr, Token: "t"}).Validate(); err != nil {
			t.Errorf("with token, Validate(%s) = %v", addr, err)
		}
	}
}

func TestWrap(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		w.Write(b)
	})
	cases := []struct {
		name   string
		token  string
		method string
		hdr    map[string]string
		body   string
		want   int
	}{
		{"no token configured", "", "GET", nil, "", 200},
		{"missing token", "s3cret", "GET", nil, "", 401},
		{"wrong token", "s3cret", "GET", map[string]string{"Authorization": "Bearer nope"}, "", 401},
		{"right token", "s3cret", "GET", map[string]string{"Authorization": "Bearer s3cret"}, "", 200},
		{"cookie token", "s3cret", "GET", map[string]string{"Cookie": "hivemem_token=s3cret"}, "", 200},
		{"login cookie", "s3cret", "GET", map[string]string{"Cookie": "hivemem_token=" + CookieValue("s3cret")}, "", 200},
		{"login cookie of another token", "s3cret", "GET", map[string]string{"Cookie": "hivemem_token=" + CookieValue("other")}, "", 401},
		{"same origin post", "", "POST", map[string]string{"Origin": "http://localhost:7777"}, "x", 200},
		{"foreign host on loopback", "", "GET", map[string]string{"Host": "example.test"}, "", 421},
		{"cross origin post", "", "POST", map[string]string{"Origin": "http://evil.test"}, "x", 403},
		{"cross site no origin", "", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, "x", 403},
		{"cross origin get", "", "GET", map[string]string{"Origin": "http://evil.test"}, "", 403},
		{"origin of another scheme, post", "", "POST", map[string]string{"Origin": "https://localhost:7777"}, "x", 403},
		{"origin of another scheme, get", "", "GET", map[string]string{"Origin": "https://localhost:7777"}, "", 403},
		{"same origin, cross-site fetch", "", "POST", map[string]string{"Origin": "http://localhost:7777", "Sec-Fetch-Site": "cross-site"}, "x", 403},
		{"same origin, same-origin fetch", "", "POST", map[string]string{"Origin": "http://localhost:7777", "Sec-Fetch-Site": "same-origin"}, "x", 200},
		{"cross-site get (a link)", "", "GET", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", 200},
		{"bearer scheme lower case", "s3cret", "GET", map[string]string{"Authorization": "bearer s3cret"}, "", 200},
		{"bearer scheme upper case", "s3cret", "GET", map[string]string{"Authorization": "BEARER s3cret"}, "", 200},
		{"bearer, token in another case", "s3cret", "GET", map[string]string{"Authorization": "Bearer S3CRET"}, "", 401},
		{"basic scheme", "s3cret", "GET", map[string]string{"Authorization": "Basic s3cret"}, "", 401},
		{"oversize", "", "POST", nil, strings.Repeat("x", 2000), 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Wrap(Config{Addr: "127.0.0.1:0", Token: c.token, MaxBody: 1000}, echo)
			r := httptest.NewRequest(c.method, "http://localhost:7777/api", strings.NewReader(c.body))
			for k, v := range c.hdr {
				r.Header.Set(k, v)
			}
			if host := c.hdr["Host"]; host != "" {
				r.Host = host
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.want, w.Body.String())
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:7777": true, "localhost:1": true, "LOCALHOST": true, "[::1]:80": true, "app.localhost:9": true,
		"127.1.2.3": true, "evil.example:7777": false, "10.0.0.1:80": false, "localhost.evil.example": false, "": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v", host, got)
		}
	}
}

// TestCookieValue: the login cookie is not the token, holds only
// characters a cookie value can carry, and differs between tokens.
func TestCookieValue(t *testing.T) {
	seen := map[string]string{}
	for _, tok := range []string{"s3cret", "semi;colon", `quote"back\slash`, "pässwörd", "with space"} {
		v := CookieValue(tok)
		if v == tok || strings.Contains(v, tok) {
			t.Errorf("CookieValue(%q) = %q holds the token", tok, v)
		}
		if strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Errorf("CookieValue(%q) = %q: not cookie-safe", tok, v)
		}
		if other, dup := seen[v]; dup {
			t.Errorf("CookieValue(%q) = CookieValue(%q)", tok, other)
		}
		seen[v] = tok
	}
	if r := httptest.NewRequest("GET", "/", nil); Authorized(r, "") {
		t.Error("Authorized with no token configured")
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(&http.Cookie{Name: CookieName, Value: CookieValue("")})
	if Authorized(r, "") {
		t.Error("Authorized with no token configured, cookie of the empty token")
	}
}
