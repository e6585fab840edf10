package web_test

// The API and pages driven with hostile and malformed input
// through the real handler. Every refusal must be a 4xx with a JSON (API)
// or HTML (page) message that names the problem; nothing may answer 500,
// panic, hang, or succeed silently on input that was wrong.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/wiring"
)

// wantError checks an API error response: the wanted status, JSON, and a
// message containing want.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body.String())
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error content type %q: %s", ct, w.Body.String())
	}
	var e struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("error body is not {\"error\": ...}: %v %s", err, w.Body.String())
	}
	if !strings.Contains(strings.ToLower(e.Error), strings.ToLower(want)) {
		t.Fatalf("error %q does not mention %q", e.Error, want)
	}
}

// TestAgentIDsNeverReachFileSystem sends every agent endpoint ids that must never reach
// the file system: each is refused with 400 naming the invalid id, or 404
// for a well-formed id with no file. None may be 500.
func TestAgentIDsNeverReachFileSystem(t *testing.T) {
	e := newEnv(t, web.Deps{})
	ids := []struct {
		raw    string // as it goes into the path (escaped)
		status int
	}{
		{"..%2Fx", 400},
		{"a%2Fb", 400},
		{"a%5Cb", 400},
		{"CON", 400},
		{"a%00b", 400},
		{strings.Repeat("a", 65), 400},
		{url.PathEscape("аlice"), 400}, // Cyrillic а
		{url.PathEscape("ｃｏｄｅｒ"), 400}, // fullwidth
		{url.PathEscape("coder "), 400},
		{url.PathEscape(" coder"), 400},
		{"%FF%FE", 400},
		{"-x", 400},
		{"_x", 400},
		{"x..y", 400},
		{strings.Repeat("a", 64), 404},
		{"con", 404},
		{"a.", 404},
	}
	endpoints := []struct {
		method, pattern, body string
	}{
		{"GET", "/api/v1/agents/%s", ""},
		{"GET", "/api/v1/agents/%s/memory", ""},
		{"GET", "/api/v1/agents/%s/memory?format=raw", ""},
		{"POST", "/api/v1/agents/%s/condense", `{"dry_run": true}`},
		{"GET", "/api/v1/agents/%s/backups/latest", ""},
		{"POST", "/api/v1/agents/%s/backups/latest/restore", `{}`},
	}
	for _, ep := range endpoints {
		for _, id := range ids {
			target := fmt.Sprintf(ep.pattern, id.raw)
			t.Run(ep.method+" "+target, func(t *testing.T) {
				w := e.do(t, req{method: ep.method, target: target, body: ep.body})
				want := "invalid agent id"
				if id.status == 404 {
					want = "no "
				}
				wantError(t, w, id.status, want)
			})
		}
	}
	// "." and ".." as a path segment never reach a handler: the mux
	// redirects to the cleaned path.
	for _, target := range []string{"/api/v1/agents/./memory", "/api/v1/agents/../status", "/api/v1/agents/%2e%2e/memory"} {
		if w := e.do(t, req{target: target}); w.Code != http.StatusTemporaryRedirect && w.Code != http.StatusMovedPermanently && w.Code != 400 && w.Code != 404 {
			t.Errorf("%s = %d: %s", target, w.Code, w.Body.String())
		}
	}
	// The backups list of an unknown but valid agent is an empty list.
	w := e.do(t, req{target: "/api/v1/agents/con/backups"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"backups": []`) {
		t.Errorf("backups of a valid unknown agent = %d %s", w.Code, w.Body.String())
	}
	// Pages answer the same ids with an HTML error page, never 500.
	for _, id := range []string{"..%2Fx", "a%00b", "CON", url.PathEscape("аlice")} {
		for _, p := range []string{"/agents/%s", "/agents/%s/condense", "/agents/%s/backups", "/agents/%s/archive/2026-11.md"} {
			target := fmt.Sprintf(p, id)
			w := e.do(t, req{target: target})
			if w.Code != 400 || !strings.Contains(w.Body.String(), "invalid agent id") {
				t.Errorf("page %s = %d: %.200s", target, w.Code, w.Body.String())
			}
		}
	}
}

// TestSearchParamsMalformed drives /api/v1/search with malformed parameters:
// each is a 400 that names the parameter.
func TestSearchParamsMalformed(t *testing.T) {
	e := newEnv(t, web.Deps{})
	cases := []struct {
		name, query, want string
	}{
		{"results 0", "q=x&results=0", "results"},
		{"results -1", "q=x&results=-1", "results"},
		{"results 1e9", "q=x&results=1e9", "results"},
		{"results huge", "q=x&results=1000000000", "results"},
		{"results overflow", "q=x&results=99999999999999999999999", "results"},
		{"results float", "q=x&results=2.5", "results"},
		{"results blank", "q=x&results=%20", "results"},
		{"since month 13", "q=x&since=2024-13-45", `since date "2024-13-45" is not a day (want YYYY-MM-DD)`},
		{"since slashes", "q=x&since=2024/01/01", "since"},
		{"since short", "q=x&since=2024-1-1", "since"},
		{"since with time", "q=x&since=2024-01-01T00:00:00Z", "since"},
		{"until feb 30", "q=x&until=2024-02-30", "until"},
		{"until bad utf8", "q=x&until=%FF", "until"},
		{"since after until", "q=x&since=2026-11-02&until=2026-11-01", "since"},
		{"as_of month 13", "q=x&as_of=2024-13-45", `as of date "2024-13-45" is not a day (want YYYY-MM-DD)`},
		{"as_of not a date", "q=x&as_of=last%20week", `as of date "last week" is not a day`},
		{"as_of with time", "q=x&as_of=2024-01-01T00:00:00Z", `as of date "2024-01-01T00:00:00Z" is not a day`},
		{"agent traversal", "q=x&agent=..%2Fx", "agent"},
		{"agent slash", "q=x&agent=a%2Fb", "agent"},
		{"agent dot", "q=x&agent=.", "agent"},
		{"agent upper", "q=x&agent=CON", "agent"},
		{"agent NUL", "q=x&agent=a%00b", "agent"},
		{"agent long", "q=x&agent=" + strings.Repeat("a", 65), "agent"},
		{"agent lookalike", "q=x&agent=" + url.QueryEscape("аlice"), "agent"},
		{"room slash", "q=x&room=a%2Fb", "room"},
		{"room NUL", "q=x&room=a%00", "room"},
		{"room bad utf8", "q=x&room=%FF", "room"},
		{"wing bad utf8", "q=x&wing=%FF", "wing"},
		{"wing long", "q=x&wing=" + strings.Repeat("w", 201), "wing"},
		{"mode upper", "q=x&mode=LEXICAL", "mode"},
		{"mode vector lexical-only", "q=x&mode=vector", "vector"},
		{"q missing", "", "q is empty"},
		{"q NUL only", "q=%00%00", "q is empty"},
		{"q tabs", "q=%09%0A%0D", "q is empty"},
		{"q bad utf8", "q=abc%C3%28", "utf-8"},
		{"q 100 KB", "q=" + strings.Repeat("a", 100<<10), "at most 4096"},
		{"q 4097 multibyte", "q=" + url.QueryEscape(strings.Repeat("é", 2049)), "at most 4096"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, e.do(t, req{target: "/api/v1/search?" + c.query}), 400, c.want)
		})
	}
}

// TestSearchQuerySyntaxIsWords sends FTS5 syntax and SQL as queries, in every
// mode the lexical-only palace offers: each is searched as words (200 with
// a hits list), never an FTS5 syntax error (500). Queries without any word
// are refused (TestSearchNoWords).
func TestSearchQuerySyntaxIsWords(t *testing.T) {
	e := newEnv(t, web.Deps{})
	queries := []string{
		`"unbalanced`, `"flaky login"`, `flaky*`, `* login`, `NEAR(flaky login)`, `NEAR`, `flaky NEAR/2 login`,
		`(flaky`, `flaky)`, `("x")`, `flaky AND login`, `flaky OR`, `NOT login`, `AND OR NOT`, `-flaky`, `+login`,
		`heading:login`, `{heading}: login`, `^login`, `flaky : login`, `'; DROP TABLE drawers; --`, `%_a%`,
		`login\`, "login\x00test", `the login of a`, `🎉 login`, `日本語 login`, `l` + strings.Repeat(" login", 500),
		strings.Repeat("x", 4096),
	}
	searchEach(t, e, []string{"", "hybrid", "lexical"}, queries, func(t *testing.T, mode, q string, w *httptest.ResponseRecorder) {
		if w.Code != 200 {
			t.Fatalf("= %d: %s", w.Code, w.Body.String())
		}
		var s web.SearchResponse
		if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || s.Hits == nil {
			t.Fatalf("bad response: %v %s", err, w.Body.String())
		}
	})
	// The search page takes the same hostile text without a 500.
	for _, q := range queries[:10] {
		w := e.do(t, req{target: "/search?" + url.Values{"q": {q}}.Encode()})
		if w.Code != 200 {
			t.Errorf("search page %q = %d", q, w.Code)
		}
	}
}

// searchEach runs, for every mode (the default when empty) and query, a
// subtest named for both that sends GET /api/v1/search and gives the
// answer to check.
func searchEach(t *testing.T, e env, modes, queries []string, check func(t *testing.T, mode, q string, w *httptest.ResponseRecorder)) {
	t.Helper()
	for _, mode := range modes {
		for _, q := range queries {
			name := mode + " " + q
			if len(name) > 40 {
				name = name[:40]
			}
			t.Run(name, func(t *testing.T) {
				v := url.Values{"q": {q}}
				if mode != "" {
					v.Set("mode", mode)
				}
				check(t, mode, q, e.do(t, req{target: "/api/v1/search?" + v.Encode()}))
			})
		}
	}
}

// TestSearchNoWords: a query with no searchable word (only
// punctuation, or only symbols) can never match anything in the
// lexical-only palace. Whitespace-only queries are refused with 400 ("q is
// empty"); these must be too, not answered 200 with no hits, so that a
// client can tell a query that was thrown away from one that found
// nothing. Without a model every mode is lexical.
func TestSearchNoWords(t *testing.T) {
	e := newEnv(t, web.Deps{})
	for _, mode := range []string{"lexical", "hybrid", ""} {
		for _, q := range []string{"*", "***", "()", `""`, "-", "...", "!?", "🎉", "%_%"} {
			t.Run(mode+" "+q, func(t *testing.T) {
				v := url.Values{"q": {q}}
				if mode != "" {
					v.Set("mode", mode)
				}
				w := e.do(t, req{target: "/api/v1/search?" + v.Encode()})
				if w.Code == 200 {
					t.Fatalf("q=%q (no searchable words) = 200 %s; want a 400 saying the query has no words to search for", q, strings.Join(strings.Fields(w.Body.String()), " "))
				}
				wantError(t, w, 400, "no words to search for")
			})
		}
	}
	// The search page shows the same refusal, never a 500.
	if w := e.do(t, req{target: "/search?q=%28%29"}); w.Code != 400 || !strings.Contains(w.Body.String(), "no words to search for") {
		t.Errorf("search page q=() = %d: %.300s", w.Code, w.Body.String())
	}
}

// TestWrongMethodsAndRoutes: a wrong method is 405 with Allow; an unknown
// path under /api is 404 JSON.
func TestWrongMethodsAndRoutes(t *testing.T) {
	e := newEnv(t, web.Deps{})
	cases := []struct {
		method, target string
		status         int
		allow          string
	}{
		{"POST", "/api/v1/status", 405, "GET"},
		{"PUT", "/api/v1/settings", 405, "GET, PATCH"},
		{"DELETE", "/api/v1/settings", 405, "GET, PATCH"},
		{"POST", "/api/v1/search?q=x", 405, "GET"},
		{"PATCH", "/api/v1/agents/coder", 405, "GET"},
		{"GET", "/api/v1/agents/coder/condense", 405, "POST"},
		{"PUT", "/api/v1/agents/coder/condense", 405, "POST"},
		{"GET", "/api/v1/agents/planner/backups/latest/restore", 405, "POST"},
		{"DELETE", "/api/v1/agents/planner/backups/latest", 405, "GET"},
		{"POST", "/api/v1/events/stream", 405, "GET"},
		{"OPTIONS", "/api/v1/wake-up", 405, "GET"},
		{"GET", "/api/v1/agents/", 404, ""},
		{"GET", "/api/v2/status", 404, ""},
		{"GET", "/api/v1/agents/coder/memory/extra", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			w := e.do(t, req{method: c.method, target: c.target})
			if c.status == 405 {
				wantError(t, w, 405, "not allowed")
				if got := w.Header().Get("Allow"); got != c.allow {
					t.Errorf("Allow = %q, want %q", got, c.allow)
				}
				return
			}
			if w.Code != c.status {
				t.Fatalf("= %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
		})
	}
}

// TestMalformedBodiesRefused: wrong content types, malformed, empty, oversized and
// wrong-typed JSON bodies on every endpoint that takes one.
func TestMalformedBodiesRefused(t *testing.T) {
	e := newEnv(t, web.Deps{})
	big := `{"reflector": {"interval": "` + strings.Repeat("9", 70<<10) + `"}}`
	cases := []struct {
		name, method, target, body, ct string
		status                         int
		want                           string
	}{
		{"settings form", "PATCH", "/api/v1/settings", "reflector.recent_keep=3", "application/x-www-form-urlencoded", 415, "content type"},
		{"settings text", "PATCH", "/api/v1/settings", `{"reflector":{"recent_keep":3}}`, "text/plain", 415, "content type"},
		{"settings oversize", "PATCH", "/api/v1/settings", big, "application/json", 413, "over"},
		{"settings null", "PATCH", "/api/v1/settings", `null`, "application/json", 400, "nothing to change"},
		{"settings reflector null", "PATCH", "/api/v1/settings", `{"reflector": null}`, "application/json", 400, "nothing to change"},
		{"settings array", "PATCH", "/api/v1/settings", `[]`, "application/json", 400, "bad JSON"},
		{"settings string", "PATCH", "/api/v1/settings", `"x"`, "application/json", 400, "bad JSON"},
		{"settings float int", "PATCH", "/api/v1/settings", `{"reflector": {"recent_keep": 2.5}}`, "application/json", 400, "recent_keep"},
		{"settings exp int", "PATCH", "/api/v1/settings", `{"reflector": {"recent_keep": 1e3}}`, "application/json", 400, "recent_keep"},
		{"settings overflow", "PATCH", "/api/v1/settings", `{"reflector": {"min_bytes": 99999999999999999999999}}`, "application/json", 400, "min_bytes"},
		{"settings negative budget", "PATCH", "/api/v1/settings", `{"reflector": {"budget_bytes": -1}}`, "application/json", 400, "budget_bytes"},
		{"settings huge retention", "PATCH", "/api/v1/settings", `{"reflector": {"retention": 1000000000}}`, "application/json", 400, "retention"},
		{"settings interval negative", "PATCH", "/api/v1/settings", `{"reflector": {"interval": "-5m"}}`, "application/json", 400, "interval"},
		{"settings interval huge", "PATCH", "/api/v1/settings", `{"reflector": {"interval": "100000h"}}`, "application/json", 400, "interval"},
		{"settings enabled string", "PATCH", "/api/v1/settings", `{"reflector": {"enabled": "yes"}}`, "application/json", 400, "enabled"},
		{"settings bad utf8", "PATCH", "/api/v1/settings", "{\"reflector\": {\"interval\": \"\xff\"}}", "application/json", 400, "interval"},
		{"settings duplicate section", "PATCH", "/api/v1/settings", `{"reflector": {"recent_keep": 3}, "manager": {"token": "x"}}`, "application/json", 400, "token"}, // only manager.mining can be set
		{"condense text", "POST", "/api/v1/agents/coder/condense", `{}`, "text/plain", 415, "content type"},
		{"condense oversize", "POST", "/api/v1/agents/coder/condense", `{"if_match": "` + strings.Repeat("a", 70<<10) + `"}`, "application/json", 413, "over"},
		{"condense dry_run string", "POST", "/api/v1/agents/coder/condense", `{"dry_run": "yes"}`, "application/json", 400, "dry_run"},
		{"condense if_match upper", "POST", "/api/v1/agents/coder/condense", `{"dry_run": true, "if_match": "` + strings.Repeat("A", 64) + `"}`, "application/json", 400, "if_match"},
		{"condense if_match number", "POST", "/api/v1/agents/coder/condense", `{"if_match": 5}`, "application/json", 400, "if_match"},
		{"restore text", "POST", "/api/v1/agents/planner/backups/latest/restore", `{}`, "text/plain", 415, "content type"},
		{"restore array", "POST", "/api/v1/agents/planner/backups/latest/restore", `[]`, "application/json", 400, "bad JSON"},
		{"restore oversize", "POST", "/api/v1/agents/planner/backups/latest/restore", `{"x": "` + strings.Repeat("a", 70<<10) + `"}`, "application/json", 413, "over"},
	}
	cfgBefore, _ := os.ReadFile(e.a.Home().ConfigPath())
	memBefore := apptest.ReadMemory(t, e.a, "coder")
	planBefore := apptest.ReadMemory(t, e.a, "planner")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": c.ct}
			wantError(t, e.do(t, req{method: c.method, target: c.target, body: c.body, hdr: hdr}), c.status, c.want)
		})
	}
	if now, _ := os.ReadFile(e.a.Home().ConfigPath()); string(now) != string(cfgBefore) {
		t.Error("a refused settings update changed config.toml")
	}
	if apptest.ReadMemory(t, e.a, "coder") != memBefore || apptest.ReadMemory(t, e.a, "planner") != planBefore {
		t.Error("a refused request changed a memory file")
	}
}

// TestMalformedQueryParams: the other endpoints' parameters, malformed.
func TestMalformedQueryParams(t *testing.T) {
	e := newEnv(t, web.Deps{})
	cases := []struct {
		target string
		status int
		want   string
	}{
		{"/api/v1/search?q=login&asof=2026-11-27", 400, `unknown parameter "asof"`},
		{"/api/v1/search?q=login&agents=planner", 400, `unknown parameter "agents"`},
		{"/api/v1/wake-up?agent=planner", 400, `unknown parameter "agent"`},
		{"/api/v1/search?q=login&as_of=2026-11-27&as_of=2026-11-28", 400, `parameter "as_of" given 2 times with different values`},
		{"/api/v1/wake-up?wing=planner&wing=coder", 400, `parameter "wing" given 2 times`},
		{"/api/v1/wake-up?budget=-1", 400, "budget"},
		{"/api/v1/wake-up?budget=1e9", 400, "budget"},
		{"/api/v1/wake-up?budget=abc", 400, "budget"},
		{"/api/v1/wake-up?wing=%FF", 400, "wing"},
		{"/api/v1/wake-up?wing=" + strings.Repeat("w", 201), 400, "wing"},
		{"/api/v1/wake-up?wing=..%2Fx", 400, `invalid agent id "../x"`},
		{"/api/v1/wake-up?wing=Bad..Id", 400, `invalid agent id "Bad..Id"`},
		{"/api/v1/wake-up?wing=nobody", 404, `unknown wing "nobody"`},
		{"/api/v1/wake-up?wing=a%00b", 400, "NUL"},
		{"/api/v1/events?n=-1", 400, "n "},
		{"/api/v1/events?n=10001", 400, "n "},
		{"/api/v1/events?n=1e3", 400, "n "},
		{"/api/v1/events?agent=..%2Fx", 400, "agent"},
		{"/api/v1/events?type=" + strings.Repeat("a", 41), 400, "type"},
		{"/api/v1/events?type=condense%00", 400, "type"},
		{"/api/v1/events/stream?from=abc", 400, "offset"},
		{"/api/v1/events/stream?from=1e3", 400, "offset"},
		{"/api/v1/events/stream?agent=CON", 400, "agent"},
		{"/api/v1/events/stream?type=Bad", 400, "type"},
		{"/api/v1/agents/planner/memory?format=RAW", 400, "format"},
		{"/api/v1/agents/planner/memory?format=%00", 400, "format"},
		{"/api/v1/agents/planner/backups/latest?content=yes", 400, "content"},
		{"/api/v1/agents/planner/backups/20261129T135100", 400, "backup name"},
		{"/api/v1/agents/planner/backups/20261129T135100Z-0", 400, "backup name"},
		{"/api/v1/agents/planner/backups/20261129T135100Z-1234567", 400, "backup name"},
		{"/api/v1/agents/planner/backups/LATEST", 400, "backup name"},
		{"/api/v1/agents/planner/backups/99999999T999999Z", 404, "no backup"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			wantError(t, e.do(t, req{target: c.target}), c.status, c.want)
		})
	}
	// A stream with a bad Last-Event-ID header is refused too.
	wantError(t, e.do(t, req{target: "/api/v1/events/stream", hdr: map[string]string{"Last-Event-ID": "-1"}}), 400, "offset")
	// Viewer pages tolerate junk line numbers.
	for _, target := range []string{
		"/agents/planner?from=-5&to=-9", "/agents/planner?from=99999999999999999999&to=x", "/agents/planner?from=3&to=1",
		"/agents/planner?q=" + strings.Repeat("q", 5000), "/agents/planner?q=%FF%FE", "/agents/planner?view=%00",
	} {
		if w := e.do(t, req{target: target}); w.Code != 200 {
			t.Errorf("%s = %d: %.200s", target, w.Code, w.Body.String())
		}
	}
}

// TestBrokenMemoryFilesShownRaw: memory files that are binary, invalid UTF-8,
// malformed markdown, empty, or not a file at all. Every endpoint answers
// (the file shown raw with its problem), none with a 500 or a panic.
func TestBrokenMemoryFilesShownRaw(t *testing.T) {
	e := newEnv(t, web.Deps{})
	files := map[string][]byte{
		"binary":   append([]byte("# Memory\n\x00\x01\x02\xff\xfe"), make([]byte, 4096)...),
		"badutf8":  []byte("# Memory — x (badutf8)\n\n## 2026-11-01 — caf\xe9\nbody \xc3\x28 text\n"),
		"fences":   []byte("# M\n\n```\n## 2026-11-01 — inside a fence\n## Recent\n~~~\n"),
		"empty":    {},
		"headings": []byte("## 📌 Durable facts (pinned — never condensed)\n## 📌 Durable facts (pinned — never condensed)\n## Recent\n## Recent\n## 🗜 Condensed history\n##\n## \n###### x\n"),
		"crlf":     []byte("# M\r\n\r\n## 2026-11-01 — crlf\r\nbody\r\n\r"),
		"longline": []byte("# M\n\n## 2026-11-01 — long\n" + strings.Repeat("word ", 300000) + "\n"),
	}
	for id, data := range files {
		dir := filepath.Join(e.a.Home().AgentsDir(), id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "memory.md"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// memory.md that is a directory.
	if err := os.MkdirAll(filepath.Join(e.a.Home().AgentsDir(), "dirfile", "memory.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	for id := range files {
		for _, target := range []string{
			"/api/v1/agents/" + id, "/api/v1/agents/" + id + "/memory", "/api/v1/agents/" + id + "/memory?format=raw",
			"/agents/" + id, "/agents/" + id + "?view=raw", "/agents/" + id + "/condense", "/agents/" + id + "/backups",
		} {
			t.Run(target, func(t *testing.T) {
				if w := e.do(t, req{target: target}); w.Code != 200 {
					t.Fatalf("= %d: %.300s", w.Code, w.Body.String())
				}
			})
		}
		t.Run("condense dry run "+id, func(t *testing.T) {
			w := e.do(t, req{method: "POST", target: "/api/v1/agents/" + id + "/condense", body: `{"dry_run": true, "force": true}`})
			if w.Code >= 500 {
				t.Fatalf("= %d: %.300s", w.Code, w.Body.String())
			}
		})
	}
	for _, target := range []string{"/api/v1/agents", "/api/v1/status", "/", "/api/v1/wake-up"} {
		t.Run(target, func(t *testing.T) {
			if w := e.do(t, req{target: target}); w.Code >= 500 {
				t.Fatalf("= %d: %.300s", w.Code, w.Body.String())
			}
		})
	}
	// The agent list grades them: a file that does not parse and one that
	// cannot be read are errors that say which.
	list, err := e.c.Agents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	for _, s := range list {
		if s.Health == web.HealthError {
			notes[s.Agent] = s.HealthNote
		}
	}
	if notes["badutf8"] != "the memory file does not parse" || notes["dirfile"] != "cannot read the memory file" || notes["empty"] != "" {
		t.Errorf("health notes of the broken files = %q", notes)
	}
	// The digest of an unparsable file cannot be built: an error that
	// says why (the status is the server's: its data is broken).
	w0 := e.do(t, req{target: "/api/v1/wake-up?wing=badutf8"})
	if w0.Code == 200 || !strings.Contains(w0.Body.String(), "invalid UTF-8") {
		t.Errorf("wake-up of an invalid UTF-8 file = %d %s", w0.Code, w0.Body.String())
	}
	// A memory.md that is a directory is the server's problem to report,
	// but with a message, as JSON.
	w := e.do(t, req{target: "/api/v1/agents/dirfile/memory"})
	if w.Code == 200 {
		t.Errorf("memory.md that is a directory = 200: %.200s", w.Body.String())
	}
	var er struct{ Error string }
	if json.Unmarshal(w.Body.Bytes(), &er) != nil || !strings.Contains(er.Error, "dirfile") {
		t.Errorf("error does not name the agent: %d %s", w.Code, w.Body.String())
	}
}

// TestConcurrentRequests: searches, reads, dry runs and settings
// updates at once (run with -race). Every request succeeds, and the
// settings file ends up holding one of the values written, intact.
func TestConcurrentRequests(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	client := srv.Client()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	do := func(method, path, body string) {
		defer wg.Done()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r, _ := http.NewRequest(method, srv.URL+path, rd)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(r)
		if err != nil {
			errs <- err
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			errs <- fmt.Errorf("%s %s = %d: %.200s", method, path, resp.StatusCode, b)
		}
	}
	for i := 0; i < 12; i++ {
		wg.Add(6)
		go do("GET", "/api/v1/search?q=flaky+login+test&results=3", "")
		go do("GET", "/api/v1/agents", "")
		go do("GET", "/api/v1/agents/planner/memory", "")
		go do("POST", "/api/v1/agents/coder/condense", `{"dry_run": true, "force": true}`)
		go do("PATCH", "/api/v1/settings", fmt.Sprintf(`{"reflector": {"recent_keep": %d}}`, 3+i))
		go do("GET", "/api/v1/wake-up?wing=planner", "")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var s app.SettingsResult
	w := e.do(t, req{target: "/api/v1/settings"})
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || s.ConfigError != "" || s.Reflector.RecentKeep < 3 || s.Reflector.RecentKeep > 14 {
		t.Errorf("settings after concurrent updates: %v %+v", err, s)
	}
	raw, _ := os.ReadFile(e.a.Home().ConfigPath())
	if n := strings.Count(string(raw), "recent_keep"); n != 1 {
		t.Errorf("config.toml has %d recent_keep lines:\n%s", n, raw)
	}
}

// TestGuardOddHeaders: the guard with odd Host and Origin headers and a
// body at and over its cap.
func TestGuardOddHeaders(t *testing.T) {
	const tok = "guard-token"
	e := newEnv(t, web.Deps{Guard: &httpguard.Config{Addr: "127.0.0.1:7777", Token: tok, MaxBody: 2048}})
	bearer := "Bearer " + tok
	cases := []struct {
		name   string
		r      req
		status int
	}{
		{"empty host", req{target: "/api/v1/status", hdr: map[string]string{"Host": "", "Authorization": bearer}}, 421},
		{"rebinding subdomain", req{target: "/api/v1/status", hdr: map[string]string{"Host": "127.0.0.1.evil.example", "Authorization": bearer}}, 421},
		{"localhost. with dot", req{target: "/api/v1/status", hdr: map[string]string{"Host": "localhost.:7777", "Authorization": bearer}}, 200},
		{"bearer scheme in any case", req{target: "/api/v1/status", hdr: map[string]string{"Authorization": "bearer " + tok}}, 200},
		{"BEARER scheme, two spaces", req{target: "/api/v1/status", hdr: map[string]string{"Authorization": "BEARER  " + tok}}, 200},
		{"basic scheme", req{target: "/api/v1/status", hdr: map[string]string{"Authorization": "Basic " + tok}}, 401},
		{"bearer with NUL", req{target: "/api/v1/status", hdr: map[string]string{"Authorization": bearer + "\x00"}}, 401},
		{"empty bearer", req{target: "/api/v1/status", hdr: map[string]string{"Authorization": "Bearer "}}, 401},
		{"origin port differs", req{method: "POST", target: "/api/v1/agents/reviewer/condense", body: `{"dry_run":true}`, hdr: map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:8888"}}, 403},
		{"origin garbage", req{method: "POST", target: "/api/v1/agents/reviewer/condense", body: `{"dry_run":true}`, hdr: map[string]string{"Authorization": bearer, "Origin": "::::"}}, 403},
		{"body over cap", req{method: "POST", target: "/api/v1/agents/reviewer/condense", body: `{"if_match":"` + strings.Repeat("a", 3000) + `"}`, hdr: map[string]string{"Authorization": bearer}}, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, c.r)
			if w.Code != c.status {
				t.Fatalf("= %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			if c.status >= 400 {
				var er struct{ Error string }
				if err := json.Unmarshal(w.Body.Bytes(), &er); err != nil || er.Error == "" {
					t.Errorf("refusal without a JSON message: %s", w.Body.String())
				}
			}
		})
	}
}

// TestAnnouncedHugeBodyRefusedBySize: a client that announces a body larger
// than the cap is refused by size, without reading it all.
func TestAnnouncedHugeBodyRefusedBySize(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "PATCH /api/v1/settings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"reflector\": {\"interval\": \"", 1<<30)
	chunk := []byte(strings.Repeat("9", 32<<10))
	for i := 0; i < 4; i++ {
		if _, err := conn.Write(chunk); err != nil {
			break
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to an oversize body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("= %d, want 413", resp.StatusCode)
	}
}

// TestHybridQuerySyntax: with the MiniLM model installed, hostile
// queries in hybrid and vector modes are embedded and searched (200), never
// a tokenizer or FTS error. Skipped without the model.
func TestHybridQuerySyntax(t *testing.T) {
	dir := modelfetch.DefaultDir()
	if !wiring.ModelInstalled(dir) {
		t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", dir)
	}
	root := filepath.Join(t.TempDir(), "home")
	h := home.Home{Root: root}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[embedder]\nprovider = \"minilm\"\nmodel_dir = %q\n", dir)
	if err := os.WriteFile(h.ConfigPath(), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for id, text := range map[string]string{
		"alice": "# Memory — Alice (alice)\n\n## 2026-11-20 — fixed flaky login test\nThe session cookie had a one-second expiry skew.\n\n## 2026-11-22 — rate limiter\nToken bucket per API key.\n",
		"bob":   "# Memory — Bob (bob)\n\n## 2026-11-21 — billing export\nThe billing export streams CSV now.\n",
	} {
		hometest.WriteMemory(t, h, id, text)
	}
	ctx := context.Background()
	a, err := wiring.Open(ctx, wiring.Options{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Mine(ctx, app.MineRequest{Path: h.HiveDir()}); err != nil {
		t.Fatal(err)
	}
	hd := web.New(web.Deps{App: a})
	defer hd.Close()
	e := env{a: a, h: hd}
	queries := []string{
		`"unbalanced`, `*`, `NEAR(login cookie)`, `(`, `login AND OR NOT`, `-`, `'; DROP TABLE drawers; --`,
		`[CLS] [SEP] [MASK] [UNK]`, `##ing`, "login\x00cookie", `🎉🎉`, `日本語のテキスト`, "e\u0301\u0301\u0301",
		strings.Repeat("login cookie ", 315), strings.Repeat("界", 1365),
	}
	searchEach(t, e, []string{"", "hybrid", "vector", "lexical"}, queries, func(t *testing.T, mode, q string, w *httptest.ResponseRecorder) {
		if mode == "lexical" && store.QueryTerms(q) == nil {
			// Lexical search has nothing to look for; the vector
			// side of the other modes still answers.
			wantError(t, w, 400, "no words to search for")
			return
		}
		if w.Code != 200 {
			t.Fatalf("= %d: %s", w.Code, w.Body.String())
		}
		s := decode[web.SearchResponse](t, w)
		if mode != "lexical" && len(s.Hits) == 0 {
			t.Fatalf("%s search found nothing: %s", mode, w.Body.String())
		}
	})
}

// TestSearchUnknownWing: a wing (or agent) no drawer has (a typo) is a
// 404, as /api/v1/wake-up answers the same wing with 404
// "unknown wing". The palace knows its wings (status lists them).
func TestSearchUnknownWing(t *testing.T) {
	e := newEnv(t, web.Deps{})
	w := e.do(t, req{target: "/api/v1/wake-up?wing=planer"})
	wantError(t, w, 404, "unknown wing")
	w = e.do(t, req{target: "/api/v1/search?q=flaky&wing=planer"})
	if w.Code == 200 {
		t.Fatalf("search with the unknown wing %q = 200 %s; want 404 unknown wing, as wake-up answers", "planer", strings.Join(strings.Fields(w.Body.String()), " "))
	}
	wantError(t, w, 404, "unknown wing")
	// An agent filter the same way.
	wantError(t, e.do(t, req{target: "/api/v1/search?q=flaky&agent=planer"}), 404, `unknown agent "planer"`)
}

// TestWakeUpHiveBudget: the digest stays within its token budget. An
// agent's digest does (budget 1 gives an empty, truncated digest); the
// hive overview always writes its title line, so its tokens exceed a small
// budget.
func TestWakeUpHiveBudget(t *testing.T) {
	e := newEnv(t, web.Deps{})
	for _, target := range []string{"/api/v1/wake-up?wing=planner&budget=1", "/api/v1/wake-up?budget=1", "/api/v1/wake-up?budget=5"} {
		t.Run(target, func(t *testing.T) {
			w := e.do(t, req{target: target})
			d := decode[struct {
				Budget, Tokens int
				Truncated      bool
				Text           string
			}](t, w)
			if w.Code != 200 || d.Tokens > d.Budget {
				t.Fatalf("= %d: %d tokens for a budget of %d (text %q)", w.Code, d.Tokens, d.Budget, d.Text)
			}
		})
	}
}

// TestLoginNextRedirectStaysOnSite: the post-login redirect must stay on this
// site. safeNext refuses "//host", "/\host" and CR/LF, but not a TAB:
// "/\t/evil.example" passes, http.Redirect cannot parse it (a control
// character) so it goes out as is, and browsers drop TAB, CR and LF from
// URLs (WHATWG URL parsing) and follow "//evil.example": an open redirect
// from the login form, with the victim's own token.
func TestLoginNextRedirectStaysOnSite(t *testing.T) {
	const tok = "guard-token"
	e := newEnv(t, web.Deps{Guard: &httpguard.Config{Addr: "127.0.0.1:7777", Token: tok}})
	for _, next := range []string{"//evil.example", `/\evil.example`, "/\t/evil.example", "/\n/evil.example", "\t//evil.example", "/%09/evil.example", "https://evil.example"} {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(next, "\t", `\t`), "\n", `\n`), func(t *testing.T) {
			form := url.Values{"token": {tok}, "next": {next}}.Encode()
			w := e.do(t, req{method: "POST", target: "/login", body: form, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
			if w.Code != http.StatusSeeOther {
				t.Fatalf("login = %d", w.Code)
			}
			loc := w.Header().Get("Location")
			// What a browser does with the Location: drop TAB, CR, LF and
			// treat "\" as "/".
			browser := strings.NewReplacer("\t", "", "\r", "", "\n", "", `\`, "/").Replace(strings.TrimSpace(loc))
			u, err := url.Parse(browser)
			if err != nil {
				t.Fatalf("next %q redirects to Location %q, which does not parse: %v", next, loc, err)
			}
			if u.Host != "" || u.Scheme != "" || strings.HasPrefix(browser, "//") {
				t.Fatalf("next %q redirects to Location %q, which a browser follows to host %q", next, loc, u.Host)
			}
		})
	}
}

// TestSearchPageCaseFolding: the search page cuts long hits with
// snippet, which finds the query term in strings.ToLower(text) and slices
// the original text at that offset. Lower-casing can make text longer
// ("Ⱥ", 2 bytes, lower-cases to "ⱥ", 3 bytes), so the offset can lie past
// the end of the original and text[:at] panics: memory text (untrusted)
// takes the search page down for every query that hits it.
func TestSearchPageCaseFolding(t *testing.T) {
	e := newEnv(t, web.Deps{})
	text := "# Memory — stroke (stroke)\n\n## 2026-11-01 — alphabet notes\n" + strings.Repeat("Ⱥ", 400) + " zebracorn marker\n"
	p := hometest.WriteMemory(t, e.a.Home(), "stroke", text)
	if _, err := e.a.Mine(context.Background(), app.MineRequest{Path: p}); err != nil {
		t.Fatal(err)
	}
	// The API finds the section.
	w := e.do(t, req{target: "/api/v1/search?q=zebracorn"})
	if s := decode[web.SearchResponse](t, w); w.Code != 200 || len(s.Hits) == 0 {
		t.Fatalf("api search = %d %s", w.Code, w.Body.String())
	}
	// The page, over a real server (which recovers a handler's panic and
	// drops the connection).
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/search?q=zebracorn")
	if err != nil {
		t.Fatalf("GET /search?q=zebracorn: %v (the handler panicked)", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<mark>zebracorn</mark>") {
		t.Fatalf("search page = %d: %.300s", resp.StatusCode, body)
	}
}

// TestSearchPageMarksSupersededHits: a hit that a newer section of the
// same subject supersedes carries a visible marker on the search page.
func TestSearchPageMarksSupersededHits(t *testing.T) {
	e := newEnv(t, web.Deps{})
	text := "# Memory — payops (payops)\n\n" +
		"## 2026-03-10 — payments\n- The zebracorn payment request timeout is 30 seconds.\n\n" +
		"## 2026-04-15 — billing\n- Reviewed the billing dashboard with Ana.\n\n" +
		"## 2026-06-20 — payments again\n- Raised the zebracorn payment request timeout from 30 to 45 seconds.\n"
	p := hometest.WriteMemory(t, e.a.Home(), "payops", text)
	if _, err := e.a.Mine(context.Background(), app.MineRequest{Path: p}); err != nil {
		t.Fatal(err)
	}
	w := e.do(t, req{target: "/search?q=zebracorn+payment+request+timeout&wing=payops"})
	body := w.Body.String()
	if w.Code != 200 || strings.Count(body, ">superseded by ") != 1 {
		t.Fatalf("search page = %d, want one superseded marker:\n%s", w.Code, body)
	}
	if strings.Index(body, "payments again") > strings.Index(body, "superseded by") {
		t.Errorf("the newer section is not listed before the superseded one:\n%s", body)
	}
}
