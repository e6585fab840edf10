package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/web/webtest"
)

// env is a demo home served by the handler.
type env struct {
	a *app.App
	h *web.Handler
	c *client.Client // the typed client, over real HTTP to h
}

func newEnv(t *testing.T, d web.Deps) env {
	t.Helper()
	a, err := webtest.Open(context.Background(), filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	d.App = a
	d.PollInterval = 20 * time.Millisecond
	h := web.New(d)
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return env{a: a, h: h, c: client.New(srv.URL, "")}
}

// req is one request of a table.
type req struct {
	method, target, body string
	hdr                  map[string]string
}

func (e env) do(t *testing.T, r req) *httptest.ResponseRecorder {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body *strings.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	var hr *http.Request
	if body != nil {
		hr = httptest.NewRequest(r.method, r.target, body)
		hr.Header.Set("Content-Type", "application/json")
	} else {
		hr = httptest.NewRequest(r.method, r.target, nil)
	}
	hr.Host = "127.0.0.1:7777"
	for k, v := range r.hdr {
		if k == "Host" {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, hr)
	return w
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, w.Body.String())
	}
	return v
}

func TestReadEndpoints(t *testing.T) {
	manager := func(context.Context) app.ManagerStatus {
		return app.ManagerStatus{Runtime: app.Runtime{PID: 4242, UptimeSeconds: 10800, Problems: []app.Problem{}}, Index: app.IndexStats{Files: 6},
			Agents: []app.AgentStatus{{Agent: "researcher", MiningBackoff: &app.Backoff{Failures: 3, LastError: "disk full"}}}}
	}
	e := newEnv(t, web.Deps{ManagerStatus: manager})
	cases := []struct {
		name   string
		r      req
		status int
		check  func(t *testing.T, w *httptest.ResponseRecorder)
	}{
		{"agent bad id", req{target: "/api/v1/agents/Bad!"}, 400, nil},
		{"agent traversal", req{target: "/api/v1/agents/..%2f..%2fetc"}, 400, nil},
		{"agent unknown", req{target: "/api/v1/agents/nobody"}, 404, nil},
		{"memory raw", req{target: "/api/v1/agents/planner/memory?format=raw"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			if w.Body.String() != apptest.ReadMemory(t, e.a, "planner") || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
				t.Errorf("raw memory differs or wrong type %q", w.Header().Get("Content-Type"))
			}
		}},
		{"memory bad format", req{target: "/api/v1/agents/planner/memory?format=xml"}, 400, nil},
		{"memory unknown agent", req{target: "/api/v1/agents/nobody/memory"}, 404, nil},
		{"search no query", req{target: "/api/v1/search"}, 400, nil},
		{"search blank query", req{target: "/api/v1/search?q=%20%00"}, 400, nil},
		{"search long query", req{target: "/api/v1/search?q=" + strings.Repeat("a", 4097)}, 400, nil},
		{"search bad utf8", req{target: "/api/v1/search?q=%ff%fe"}, 400, nil},
		{"search results zero", req{target: "/api/v1/search?q=x&results=0"}, 400, nil},
		{"search results words", req{target: "/api/v1/search?q=x&results=many"}, 400, nil},
		{"search results too many", req{target: "/api/v1/search?q=x&results=1001"}, 400, nil},
		{"search bad date", req{target: "/api/v1/search?q=x&since=2026-13-01"}, 400, nil},
		{"search since after until", req{target: "/api/v1/search?q=x&since=2026-11-02&until=2026-11-01"}, 400, nil},
		{"search bad mode", req{target: "/api/v1/search?q=x&mode=fuzzy"}, 400, nil},
		{"search vector without model", req{target: "/api/v1/search?q=x&mode=vector"}, 400, nil},
		{"search bad agent", req{target: "/api/v1/search?q=x&agent=../x"}, 400, nil},
		{"search bad room", req{target: "/api/v1/search?q=x&room=Room!"}, 400, nil},
		{"wake-up hive", req{target: "/api/v1/wake-up"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			if !strings.Contains(w.Body.String(), `"agent": "researcher"`) {
				t.Errorf("hive wake-up lacks agents: %s", w.Body.String())
			}
		}},
		{"wake-up unknown wing", req{target: "/api/v1/wake-up?wing=nowhere"}, 404, nil},
		{"search unknown room", req{target: "/api/v1/search?q=login&room=nosuchroom"}, 404, func(t *testing.T, w *httptest.ResponseRecorder) {
			if !strings.Contains(w.Body.String(), `unknown room \"nosuchroom\"`) {
				t.Errorf("search in an unknown room: %s", w.Body.String())
			}
		}},
		{"wake-up bad budget", req{target: "/api/v1/wake-up?budget=0"}, 400, nil},
		{"wake-up huge budget", req{target: "/api/v1/wake-up?budget=100001"}, 400, nil},
		{"events filtered", req{target: "/api/v1/events?agent=tester&type=condense-abort&n=1"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			r := decode[web.EventsResponse](t, w)
			if len(r.Events) != 1 || r.Events[0].Agent != "tester" || r.Events[0].Data["failures"] != float64(2) {
				t.Errorf("events = %+v", r.Events)
			}
		}},
		{"events bad n", req{target: "/api/v1/events?n=0"}, 400, nil},
		{"events bad type", req{target: "/api/v1/events?type=DROP%20TABLE"}, 400, nil},
		{"events bad agent", req{target: "/api/v1/events?agent=A"}, 400, nil},
		{"stream bad offset", req{target: "/api/v1/events/stream?from=-3"}, 400, nil},
		{"agent backups", req{target: "/api/v1/agents/reviewer/backups"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			if !strings.Contains(w.Body.String(), `"backups": []`) {
				t.Errorf("want an empty list: %s", w.Body.String())
			}
		}},
		{"agent backups bad id", req{target: "/api/v1/agents/X/backups"}, 400, nil},
		{"backup bad name", req{target: "/api/v1/agents/planner/backups/..%2f..%2fconfig"}, 400, nil},
		{"backup unknown", req{target: "/api/v1/agents/planner/backups/20200101T000000Z"}, 404, nil},
		{"backup none", req{target: "/api/v1/agents/reviewer/backups/latest"}, 404, nil},
		{"backup bad content flag", req{target: "/api/v1/agents/planner/backups/latest?content=maybe"}, 400, nil},
		{"settings", req{target: "/api/v1/settings"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			s := decode[app.SettingsResult](t, w)
			if s.Reflector.BudgetBytes != 49152 || s.Reflector.RecentKeep != 6 || s.Reflector.Interval != "30m" || !s.Editable {
				t.Errorf("settings = %+v", s)
			}
			if strings.Contains(w.Body.String(), "api_key") || strings.Contains(w.Body.String(), "token") {
				t.Errorf("settings leak secrets: %s", w.Body.String())
			}
		}},
		{"overview shows the manager", req{target: "/"}, 200, func(t *testing.T, w *httptest.ResponseRecorder) {
			for _, want := range []string{"<dt>Process</dt><dd>pid 4242</dd>", "<dt>Problems</dt><dd>none</dd>", "<dt>Mining</dt><dd>off: nothing is mined"} {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("overview lacks %q", want)
				}
			}
			if strings.Contains(w.Body.String(), "<dt>index</dt>") {
				t.Error("nested manager objects belong in the API, not the overview")
			}
		}},
		{"unknown endpoint", req{target: "/api/v1/nothing"}, 404, func(t *testing.T, w *httptest.ResponseRecorder) {
			if e := decode[struct{ Error string }](t, w); !strings.Contains(e.Error, "no API endpoint") {
				t.Errorf("error = %q", e.Error)
			}
		}},
		{"wrong method", req{method: "DELETE", target: "/api/v1/agents"}, 405, func(t *testing.T, w *httptest.ResponseRecorder) {
			if w.Header().Get("Allow") != "GET" {
				t.Errorf("Allow = %q", w.Header().Get("Allow"))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, c.r)
			if w.Code != c.status {
				t.Fatalf("%s %s = %d, want %d: %s", c.r.method, c.r.target, w.Code, c.status, w.Body.String())
			}
			if strings.HasPrefix(c.r.target, "/api/") && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && c.name != "memory raw" {
				t.Errorf("content type %q", w.Header().Get("Content-Type"))
			}
			if c.status >= 400 {
				if e := decode[struct{ Error string }](t, w); e.Error == "" {
					t.Errorf("error response without a message: %s", w.Body.String())
				}
			}
			if c.check != nil {
				c.check(t, w)
			}
		})
	}
}

// TestReadEndpointsThroughTheClient: the read endpoints, asked through the
// typed client over real HTTP, answer what the demo home holds.
func TestReadEndpointsThroughTheClient(t *testing.T) {
	manager := func(context.Context) app.ManagerStatus {
		return app.ManagerStatus{Runtime: app.Runtime{PID: 4242, UptimeSeconds: 10800, Problems: []app.Problem{}}, Index: app.IndexStats{Files: 6},
			Agents: []app.AgentStatus{{Agent: "researcher", MiningBackoff: &app.Backoff{Failures: 3, LastError: "disk full"}}}}
	}
	e := newEnv(t, web.Deps{ManagerStatus: manager})
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	s, err := e.c.Status(ctx)
	must("status", err)
	if len(s.Agents) != 5 || s.Search != "lexical" || s.Index.Drawers == 0 || s.Reflector.Backoffs != 1 {
		t.Errorf("status = %+v", s)
	}
	if s.Manager == nil || s.Manager.PID != 4242 {
		t.Errorf("manager status not passed through: %#v", s.Manager)
	}

	got, err := e.c.Agents(ctx)
	must("agents", err)
	if len(got) != 5 {
		t.Fatalf("%d agents", len(got))
	}
	by := map[string]web.AgentSummary{}
	for _, a := range got {
		by[a.Agent] = a
	}
	if by["coder"].Health != web.HealthDue || by["tester"].Health != web.HealthBackoff || by["reviewer"].Health != web.HealthOK {
		t.Errorf("health: coder %s, tester %s, reviewer %s", by["coder"].Health, by["tester"].Health, by["reviewer"].Health)
	}
	p := by["planner"]
	if !p.Condensed || p.Backups != 1 || p.Pinned != 4 || p.LastCondensed.IsZero() || p.LastMined.IsZero() || p.Drawers == 0 {
		t.Errorf("planner = %+v", p)
	}
	if b := by["tester"].ReflectorBackoff; b == nil || b.Failures != 2 || b.LastReason != "summarize-failed" {
		t.Errorf("tester backoff = %+v", b)
	}
	if r := by["researcher"]; r.Health != web.HealthBackoff || r.MiningBackoff == nil || !strings.Contains(r.HealthNote, "disk full") {
		t.Errorf("researcher (manager mining backoff) = %+v", r)
	}
	if c := by["coder"]; c.BudgetBytes != 49152 || c.TriggerBytes != 24576 || c.BudgetPct <= 50 {
		t.Errorf("coder budget = %+v", c)
	}
	if a, err := e.c.Agent(ctx, "planner"); err != nil || a.Agent != "planner" || a.Sections != 6 {
		t.Errorf("agent = %v %+v", err, a)
	}

	m, err := e.c.Memory(ctx, "planner")
	must("memory", err)
	if m.Raw != apptest.ReadMemory(t, e.a, "planner") || len(m.SHA256) != 64 || m.Lines == 0 {
		t.Errorf("raw/sha/lines wrong: %d lines, sha %q", m.Lines, m.SHA256)
	}
	regions := map[string]int{}
	for _, s := range m.Sections {
		regions[s.Region]++
	}
	if regions["pinned"] != 1 || regions["condensed"] != 1 || regions["recent"] != 7 || len(m.Pinned) != 4 || m.Condensed == "" {
		t.Errorf("regions %v, %d pinned, condensed %q", regions, len(m.Pinned), m.Condensed)
	}

	sr, err := e.c.Search(ctx, app.SearchRequest{Query: "flaky login test"})
	must("search", err)
	if len(sr.Hits) == 0 || !strings.Contains(sr.Hits[0].Heading, "fixed flaky login test") || sr.Mode != "lexical" || sr.Results != 8 {
		t.Fatalf("search = %+v", sr)
	}
	if v := sr.Hits[0].View; !regexp.MustCompile(`^/agents/tester\?from=\d+&q=flaky\+login\+test&to=\d+#L\d+$`).MatchString(v) {
		t.Errorf("view link %q", v)
	}
	sr, err = e.c.Search(ctx, app.SearchRequest{Query: "test", Agent: "coder", Room: "recent", Since: "2026-11-01", Until: "2026-11-30", Results: 3})
	must("search filtered", err)
	if len(sr.Hits) == 0 || len(sr.Hits) > 3 {
		t.Fatalf("%d hits", len(sr.Hits))
	}
	for _, h := range sr.Hits {
		if h.Agent != "coder" || h.Room != "recent" || h.Date < "2026-11-01" || h.Date > "2026-11-30" {
			t.Errorf("hit outside the filter: %s %s %s", h.Agent, h.Room, h.Date)
		}
	}
	sr, err = e.c.Search(ctx, app.SearchRequest{Query: "kickoff", Room: "archive"})
	must("search the archive", err)
	if len(sr.Hits) == 0 || !strings.HasPrefix(sr.Hits[0].View, "/agents/planner/archive/2026-11.md?") {
		t.Errorf("archive hits %+v", sr.Hits)
	}
	if _, err := e.c.Search(ctx, app.SearchRequest{Query: "zzzunfound", Room: "condensed"}); err != nil {
		t.Errorf("search a known room without a match: %v", err)
	}

	d, err := e.c.WakeUp(ctx, app.WakeUpRequest{Wing: "planner", Budget: 400})
	must("wake-up", err)
	if d.Wing != "planner" || d.Budget != 400 || len(d.Pinned) != 4 || !strings.Contains(d.Text, "never on a Friday") {
		t.Errorf("wake-up = %+v", d)
	}

	evs, err := e.c.Events(ctx, client.EventsRequest{})
	must("events", err)
	if len(evs.Events) != 5 || evs.Offset == 0 || evs.Events[4].Offset != evs.Offset || evs.Events[0].Kind != "condense" {
		t.Errorf("events = %+v", evs)
	}

	bs, err := e.c.Backups(ctx, "")
	must("backups", err)
	if len(bs) != 1 || bs[0].Agent != "planner" || strings.HasPrefix(bs[0].Path, "/") {
		t.Errorf("backups = %+v", bs)
	}
	bd, err := e.c.Backup(ctx, "planner", "latest", true)
	must("backup detail", err)
	if bd.Identical || !strings.Contains(bd.Diff, "+## ") || !strings.Contains(bd.Content, "kickoff") || bd.CurrentSHA256 == bd.BackupSHA256 {
		t.Errorf("detail = %+v", bd)
	}
}

func TestCondenseAndRestore(t *testing.T) {
	e := newEnv(t, web.Deps{})
	before := apptest.ReadMemory(t, e.a, "coder")

	// A dry run shows the would-be file and writes nothing.
	ctx := t.Context()
	dry, err := e.c.Condense(ctx, "coder", web.CondenseRequest{DryRun: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Status != reflector.StatusDryRun || !strings.Contains(dry.Output, "## 🗜 Condensed history") || !strings.Contains(dry.Diff, "-## 2026-") || dry.Evicted == 0 {
		t.Fatalf("dry run = %+v", dry)
	}
	if got := apptest.ReadMemory(t, e.a, "coder"); got != before {
		t.Fatal("a dry run changed the file")
	}
	if len(dry.BeforeSHA256) != 64 {
		t.Fatalf("dry run before_sha256 %q", dry.BeforeSHA256)
	}

	errs := []struct {
		name   string
		r      req
		status int
	}{
		{"bad json", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dry_run": tru`}, 400},
		{"unknown field", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dryrun": true}`}, 400},
		{"not an object", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `[true]`}, 400},
		{"trailing data", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{} {}`}, 400},
		{"oversize", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"if_match": "` + strings.Repeat("a", 70000) + `"}`}, 413},
		{"wrong content type", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{}`, hdr: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"bad if_match", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"if_match": "xyz"}`}, 400},
		{"stale if_match", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"force": true, "if_match": "` + strings.Repeat("0", 64) + `"}`}, 409},
		{"bad agent", req{method: "POST", target: "/api/v1/agents/Coder/condense", body: `{}`}, 400},
		{"unknown agent", req{method: "POST", target: "/api/v1/agents/nobody/condense", body: `{}`}, 404},
		{"GET not allowed", req{target: "/api/v1/agents/coder/condense"}, 405},
		{"restore bad name", req{method: "POST", target: "/api/v1/agents/coder/backups/yesterday/restore"}, 400},
		{"restore unknown", req{method: "POST", target: "/api/v1/agents/coder/backups/latest/restore"}, 404},
		{"restore bad agent", req{method: "POST", target: "/api/v1/agents/..%2fx/backups/latest/restore"}, 400},
		{"restore bad body", req{method: "POST", target: "/api/v1/agents/planner/backups/latest/restore", body: `{"x":1}`}, 400},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			if w := e.do(t, c.r); w.Code != c.status {
				t.Errorf("= %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
		})
	}
	if got := apptest.ReadMemory(t, e.a, "coder"); got != before {
		t.Fatal("a refused request changed the file")
	}

	// Under the triggers and not forced, a small file is skipped.
	if r, err := e.c.Condense(ctx, "reviewer", web.CondenseRequest{}); err != nil || r.Status != reflector.StatusSkipped || r.Reason != reflector.SkipBelowMin {
		t.Errorf("reviewer = %v %+v", err, r)
	}

	// Apply what was previewed.
	applied, err := e.c.Condense(ctx, "coder", web.CondenseRequest{Force: true, IfMatch: dry.BeforeSHA256})
	if err != nil || applied.Status != reflector.StatusCondensed || applied.Backup == "" || applied.Diff != "" {
		t.Fatalf("apply = %v %+v", err, applied)
	}
	after := apptest.ReadMemory(t, e.a, "coder")
	if after != dry.Output {
		t.Error("the applied file differs from the preview")
	}
	evs, _ := eventlog.Open(e.a.Home().LogPath()).Read(1, nil)
	if len(evs) != 1 || evs[0].Kind != "condense" || evs[0].Agent != "coder" {
		t.Errorf("last event = %+v", evs)
	}

	// The backup shows what a restore would change, and restores.
	if d, err := e.c.Backup(ctx, "coder", applied.Backup, false); err != nil || d.Identical || !strings.Contains(d.Diff, "+## 2026-10-03") {
		t.Fatalf("backup detail = %v %+v", err, d.BackupInfo)
	}
	res, err := e.c.Restore(ctx, "coder", applied.Backup)
	if err != nil || res.Backup != applied.Backup || res.PreRestoreBackup == "" {
		t.Fatalf("restore = %v %+v", err, res)
	}
	if got := apptest.ReadMemory(t, e.a, "coder"); got != before {
		t.Error("restore did not bring the original file back")
	}
	if bs, err := e.c.Backups(ctx, "coder"); err != nil || len(bs) != 2 || bs[0].Name != res.PreRestoreBackup {
		t.Errorf("backups after restore = %v %+v", err, bs)
	}
	// The restored agent is held: the API says so, an unforced condense
	// leaves it alone, the dashboard's (forced) condense condenses it.
	if !res.Held {
		t.Errorf("restore result not held: %+v", res)
	}
	if s, err := e.c.Agent(ctx, "coder"); err != nil || s.Restored == nil || s.Restored.Backup != applied.Backup || s.Health != web.HealthRestored ||
		!strings.Contains(s.HealthNote, "left alone") {
		t.Errorf("restored agent summary = %v %+v", err, s)
	}
	if r, err := e.c.Condense(ctx, "coder", web.CondenseRequest{}); err != nil || r.Status != reflector.StatusSkipped || r.Reason != reflector.SkipRestored {
		t.Errorf("unforced condense of a restored file = %v %+v", err, r)
	}
	if r, err := e.c.Condense(ctx, "coder", web.CondenseRequest{Force: true}); err != nil || r.Status != reflector.StatusCondensed {
		t.Errorf("forced condense of a restored file = %v %+v", err, r)
	}
	if s, err := e.c.Agent(ctx, "coder"); err != nil || s.Restored != nil || s.Health == web.HealthRestored {
		t.Errorf("hold kept after a forced condense: %v %+v", err, s)
	}
	if st, err := e.c.Status(ctx); err != nil || !strings.HasPrefix(st.Reflector.Summarizer, "extractive (") {
		t.Errorf("status does not say which summariser condenses: %v %+v", err, st.Reflector)
	}
}

func TestSettingsUpdate(t *testing.T) {
	e := newEnv(t, web.Deps{})
	path := e.a.Home().ConfigPath()
	cases := []struct {
		name   string
		body   string
		status int
	}{
		{"empty body", ``, 400},
		{"empty object", `{}`, 400},
		{"no fields", `{"reflector": {}}`, 400},
		{"unknown section", `{"search": {"results": 3}}`, 400},
		{"unknown key", `{"reflector": {"budget": 3}}`, 400},
		{"wrong type", `{"reflector": {"recent_keep": "five"}}`, 400},
		{"pct zero", `{"reflector": {"byte_trigger_pct": 0}}`, 400},
		{"pct over", `{"reflector": {"byte_trigger_pct": 101}}`, 400},
		{"budget tiny", `{"reflector": {"budget_bytes": 10}}`, 400},
		{"recent_keep zero", `{"reflector": {"recent_keep": 0}}`, 400},
		{"negative min", `{"reflector": {"min_bytes": -1}}`, 400},
		{"retention zero", `{"reflector": {"retention": 0}}`, 400},
		{"interval words", `{"reflector": {"interval": "soon"}}`, 400},
		{"interval tiny", `{"reflector": {"interval": "1ms"}}`, 400},
		{"bad json", `{"reflector": `, 400},
	}
	orig, _ := os.ReadFile(path)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, req{method: "PATCH", target: "/api/v1/settings", body: c.body})
			if w.Code != c.status {
				t.Errorf("= %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
		})
	}
	if now, _ := os.ReadFile(path); string(now) != string(orig) {
		t.Fatal("a refused update changed config.toml")
	}

	keep, iv, off, words := 4, "45m", false, 300
	s, err := e.c.UpdateSettings(t.Context(), app.SettingsRequest{Reflector: &app.ReflectorPatch{RecentKeep: &keep, Interval: &iv, Enabled: &off, WordBudget: &words}})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if s.Reflector.RecentKeep != 4 || s.Reflector.Interval != "45m" || s.Reflector.Enabled || s.Reflector.WordBudget != 300 {
		t.Errorf("response settings = %+v", s.Reflector)
	}
	raw, _ := os.ReadFile(path)
	for _, want := range []string{"# hivemem demo home", "[embedder]\nprovider = \"none\" # lexical-only", "recent_keep = 4 # newest sections kept verbatim",
		"interval = \"45m\"", "enabled = false", "word_budget = 300", "[search]\nresults = 8"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("config.toml lacks %q:\n%s", want, raw)
		}
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.Reflector.RecentKeep != 4 || cfg.Reflector.Enabled || cfg.Embedder.Provider != "none" {
		t.Errorf("config after update: %v %+v", err, cfg.Reflector)
	}
	// The memory switch: {"manager": {"mining": false}} is saved, shown
	// and on the Settings page.
	if s, err := e.c.UpdateSettings(t.Context(), app.SettingsRequest{Manager: &app.ManagerPatch{Mining: &off}}); err != nil || s.Manager.Mining {
		t.Errorf("mining off = %v %+v", err, s.Manager)
	}
	if cfg, err := config.Load(path); err != nil || cfg.Manager.Mining || cfg.Reflector.RecentKeep != 4 {
		t.Errorf("config after mining off: %v %+v", err, cfg.Manager)
	}
	if w := e.do(t, req{target: "/settings"}); !strings.Contains(w.Body.String(), `<input type="checkbox" name="mining" >`) {
		t.Errorf("settings page does not show mining off")
	}
	// The handler's live config follows: a forced condense is now refused
	// because the reflector is disabled.
	if r, err := e.c.Condense(t.Context(), "coder", web.CondenseRequest{Force: true}); err != nil || r.Status != reflector.StatusSkipped || r.Reason != reflector.SkipDisabled {
		t.Errorf("condense after disabling = %v %+v", err, r)
	}

	// Layouts the line editor cannot safely change are refused, untouched.
	for name, doc := range map[string]string{
		"unparsable":  "[reflector\nrecent_keep = 3\n",
		"dotted keys": "reflector.recent_keep = 3\n[search]\nresults = 2\n",
		"inline":      "reflector = { recent_keep = 3 }\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			w := e.do(t, req{method: "PATCH", target: "/api/v1/settings", body: `{"reflector": {"recent_keep": 9}}`})
			if w.Code != 409 {
				t.Errorf("= %d, want 409: %s", w.Code, w.Body.String())
			}
			if now, _ := os.ReadFile(path); string(now) != doc {
				t.Errorf("config.toml changed to %q", now)
			}
		})
	}
	// No config.toml at all: the table is created.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	minBytes := int64(1024)
	_, err = e.c.UpdateSettings(t.Context(), app.SettingsRequest{Reflector: &app.ReflectorPatch{MinBytes: &minBytes}})
	if raw, _ := os.ReadFile(path); err != nil || string(raw) != "[reflector]\nmin_bytes = 1024\n" {
		t.Errorf("new config = %v %q", err, raw)
	}
}

// stream opens the event stream and returns a function reading the next
// event's id and data.
func stream(t *testing.T, ctx context.Context, url string, hdr map[string]string) func() (string, string) {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	return func() (id, data string) {
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "id: "):
				id = l[4:]
			case strings.HasPrefix(l, "data: "):
				data = l[6:]
			case l == "" && data != "":
				return id, data
			}
		}
		return "", ""
	}
}

func TestEventStream(t *testing.T) {
	e := newEnv(t, web.Deps{})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	next := stream(t, ctx, srv.URL+"/api/v1/events/stream?agent=coder", nil)
	// Appended through this process's log: delivered at once.
	if err := e.a.AppendEvent(eventlog.Event{Kind: "condense", Agent: "tester"}); err != nil {
		t.Fatal(err)
	}
	if err := e.a.AppendEvent(eventlog.Event{Kind: "condense", Agent: "coder", Data: map[string]any{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	id1, data := next()
	if !strings.Contains(data, `"agent":"coder"`) || !strings.Contains(data, `"n":1`) {
		t.Fatalf("first event %s: %s", id1, data)
	}
	// Written by another process (another Log on the same file): found by
	// polling the file.
	other := eventlog.Open(e.a.Home().LogPath())
	if err := other.Append(eventlog.Event{Kind: "restore", Agent: "coder"}); err != nil {
		t.Fatal(err)
	}
	id2, data := next()
	if !strings.Contains(data, `"kind":"restore"`) || id2 <= id1 {
		t.Fatalf("second event %s: %s", id2, data)
	}
	// A reconnect with Last-Event-ID resumes after the first event.
	resume := stream(t, ctx, srv.URL+"/api/v1/events/stream?agent=coder", map[string]string{"Last-Event-ID": id1})
	if id, data := resume(); id != id2 || !strings.Contains(data, `"kind":"restore"`) {
		t.Fatalf("resumed at %s: %s", id, data)
	}
	// Close ends open streams.
	done := make(chan struct{})
	go func() {
		for {
			if id, _ := next(); id == "" {
				close(done)
				return
			}
		}
	}()
	e.h.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the stream")
	}
}

func TestGuard(t *testing.T) {
	const tok = "s3cret-token-for-tests"
	e := newEnv(t, web.Deps{Guard: &httpguard.Config{Addr: "127.0.0.1:7777", Token: tok, MaxBody: 4096}})
	bearer := map[string]string{"Authorization": "Bearer " + tok}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name     string
		r        req
		status   int
		location string
	}{
		{"api without token", req{target: "/api/v1/agents"}, 401, ""},
		{"api wrong token", req{target: "/api/v1/agents", hdr: map[string]string{"Authorization": "Bearer nope"}}, 401, ""},
		{"api bearer", req{target: "/api/v1/agents", hdr: bearer}, 200, ""},
		{"api cookie", req{target: "/api/v1/agents", hdr: map[string]string{"Cookie": "hivemem_token=" + tok}}, 200, ""},
		{"page without token goes to login", req{target: "/agents/planner?view=raw"}, 303, "/login?next=%2Fagents%2Fplanner%3Fview%3Draw"},
		{"login page is public", req{target: "/login"}, 200, ""},
		{"static is public", req{target: "/static/app.css"}, 200, ""},
		{"favicon is public", req{target: "/favicon.ico"}, 404, ""},
		{"manager status without token", req{target: "/api/v1/manager"}, 401, ""},
		{"logout without token", req{method: "POST", target: "/logout"}, 401, ""},
		{"a path through static is judged by where it leads", req{target: "/static/../api/v1/agents"}, 303, "/login?next=%2Fstatic%2F..%2Fapi%2Fv1%2Fagents"},
		{"post without token", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{}`}, 401, ""},
		{"cross-origin post", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dry_run":true}`, hdr: with(bearer, "Origin", "http://evil.example")}, 403, ""},
		{"cross-site post without origin", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dry_run":true}`, hdr: with(bearer, "Sec-Fetch-Site", "cross-site")}, 403, ""},
		{"null origin post", req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dry_run":true}`, hdr: with(bearer, "Origin", "null")}, 403, ""},
		{"cross-origin login", req{method: "POST", target: "/login", body: "token=" + tok, hdr: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}}, 403, ""},
		{"same-origin post", req{method: "POST", target: "/api/v1/agents/reviewer/condense", body: `{"dry_run":true}`, hdr: with(bearer, "Origin", "http://127.0.0.1:7777")}, 200, ""},
		{"body over the guard's cap", req{method: "PATCH", target: "/api/v1/settings", body: `{"reflector":{"interval":"` + strings.Repeat("1", 5000) + `"}}`, hdr: bearer}, 413, ""},
		{"dns rebinding host", req{target: "/api/v1/agents", hdr: with(bearer, "Host", "evil.example:7777")}, 421, ""},
		{"localhost host", req{target: "/api/v1/agents", hdr: with(bearer, "Host", "localhost:7777")}, 200, ""},
		{"ipv6 loopback host", req{target: "/api/v1/agents", hdr: with(bearer, "Host", "[::1]:7777")}, 200, ""},
		{"login wrong token", req{method: "POST", target: "/login", body: "token=nope", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 401, ""},
		{"login", req{method: "POST", target: "/login", body: "token=" + tok + "&next=%2Fevents", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 303, "/events"},
		{"login keeps the redirect on site", req{method: "POST", target: "/login", body: "token=" + tok + "&next=%2F%2Fevil.example", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 303, "/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, c.r)
			if w.Code != c.status {
				t.Fatalf("= %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			if c.location != "" && w.Header().Get("Location") != c.location {
				t.Errorf("Location = %q, want %q", w.Header().Get("Location"), c.location)
			}
			if w.Header().Get("Content-Security-Policy") == "" {
				t.Error("no CSP header")
			}
		})
	}
	w := e.do(t, req{method: "POST", target: "/login", body: "token=" + tok, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	ck := w.Result().Cookies()
	// The cookie carries a value derived from the token, not the token.
	if len(ck) != 1 || ck[0].Name != "hivemem_token" || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode ||
		ck[0].Value != httpguard.CookieValue(tok) || strings.Contains(ck[0].Value, tok) {
		t.Fatalf("login cookie = %+v", ck)
	}
	if w := e.do(t, req{target: "/api/v1/agents", hdr: map[string]string{"Cookie": "hivemem_token=" + ck[0].Value}}); w.Code != 200 {
		t.Errorf("API with the login cookie: %d %s", w.Code, w.Body.String())
	}
}

// TestSessionPages: an agent's imported sessions are listed beside its
// memory file, open in the viewer, and search hits in them link there.
func TestSessionPages(t *testing.T) {
	e := newEnv(t, web.Deps{})
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	transcript := `{"role":"user","content":"Which port does the staging proxy listen on?","timestamp":"2026-11-20T10:00:00Z"}
{"role":"assistant","content":"Port 8443, behind the quokka gateway.","timestamp":"2026-11-20T10:00:03Z"}
`
	if err := os.WriteFile(src, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.a.Import(context.Background(), app.ImportRequest{Agent: "planner", Format: "generic", Paths: []string{src}})
	if err != nil || res.MineErr != nil {
		t.Fatal(err, res.MineErr)
	}
	name := filepath.Base(res.Sessions[0].Path)
	cases := []struct {
		target string
		status int
		want   []string
	}{
		{"/agents/planner", 200, []string{"Sessions", `href="/agents/planner/sessions/` + name + `"`, "Which port does the staging proxy"}},
		{"/agents/planner/sessions/" + name, 200, []string{"session " + name, "quokka gateway", "current memory", "never condensed"}},
		{"/search?q=quokka+gateway&agent=planner", 200, []string{`href="/agents/planner/sessions/` + name + `?`}},
		{"/agents/planner/sessions/" + name + "?view=raw", 200, []string{"hivemem:turns"}},
		{"/agents/planner/sessions/..%2fmemory.md", 400, nil},
		{"/agents/planner/sessions/2026-01-01-nothing-00000000.md", 404, nil},
		{"/agents/Bad/sessions/" + name, 400, nil},
	}
	for _, c := range cases {
		w := e.do(t, req{target: c.target})
		if w.Code != c.status {
			t.Fatalf("%s = %d, want %d: %.300s", c.target, w.Code, c.status, w.Body.String())
		}
		for _, s := range c.want {
			if !strings.Contains(w.Body.String(), s) {
				t.Errorf("%s: no %q in the page", c.target, s)
			}
		}
		// The turn keys are bookkeeping: only the raw view shows them.
		if !strings.Contains(c.target, "view=raw") && strings.Contains(w.Body.String(), "hivemem:") {
			t.Errorf("%s shows hivemem's bookkeeping comments", c.target)
		}
	}
}

func TestPages(t *testing.T) {
	e := newEnv(t, web.Deps{Version: "v-test"})
	marker := "window." + webtest.XSSMarker
	cases := []struct {
		name   string
		target string
		status int
		want   []string
	}{
		{"overview", "/", 200, []string{`data-agent="coder"`, `class="badge due"`, `class="badge backoff"`, "v-test", `class="fill due w`, "condense-abort"}},
		{"search form", "/search", 200, []string{`name="q"`, `<option value="coder"`}},
		{"search", "/search?q=flaky+login&agent=tester", 200, []string{"<mark>flaky</mark>", "Open in viewer", `href="/agents/tester?from=`}},
		{"search error", "/search?q=x&since=yesterday", 400, []string{"since"}},
		{"viewer", "/agents/planner", 200, []string{"region-pinned", "region-condensed", "region-recent", `id="L1"`, "never on a Friday", "<table>", `icon-pin" viewBox`, "</svg>Pinned facts", "</svg>Durable facts"}},
		{"viewer hit", "/agents/tester?from=250&to=255&q=login#L250", 200, []string{"md-section kind-section hit", "<mark>login</mark>"}},
		{"viewer raw", "/agents/planner?view=raw", 200, []string{`class="raw"`, `<span class="lno">1</span>`}},
		{"archive", "/agents/planner/archive/2026-11.md", 200, []string{"kickoff for the memory project", "current memory"}},
		{"archive bad name", "/agents/planner/archive/..%2f..%2fconfig.toml", 400, nil},
		{"archive unknown", "/agents/planner/archive/1999-01.md", 404, nil},
		{"condense", "/agents/coder/condense", 200, []string{`id="preview"`, `data-sha="`}},
		{"backups", "/agents/planner/backups", 200, []string{"act-restore", `<dialog id="confirm-restore"`}},
		{"backups none", "/agents/nobody/backups", 404, nil},
		{"events", "/events?agent=tester", 200, []string{"condensation stopped (summarize failed): claude-cli: exit status 1: rate limited; failure 2 in a row", `data-stream="/api/v1/events/stream?from=`}},
		{"events bad filter", "/events?type=Bad", 400, nil},
		{"settings", "/settings", 200, []string{`name="budget_bytes" value="49152"`, `value="30m"`}},
		{"login without token", "/login", 200, []string{"needs no token"}},
		{"bad agent page", "/agents/Bad", 400, []string{"invalid agent id"}},
		{"unknown agent page", "/agents/nobody", 404, nil},
		{"no such page", "/nope", 404, []string{"no page at /nope"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, req{target: c.target})
			body := w.Body.String()
			if w.Code != c.status {
				t.Fatalf("= %d, want %d: %.300s", w.Code, c.status, body)
			}
			if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				t.Errorf("content type %q", w.Header().Get("Content-Type"))
			}
			for _, s := range c.want {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
				t.Error("page has an inline script or style")
			}
		})
	}

	// Memory text with markup is escaped everywhere it is shown.
	for _, target := range []string{"/agents/researcher", "/agents/researcher?view=raw", "/search?q=vendor+pricing", "/api/v1/agents/researcher/memory"} {
		t.Run("escaped "+target, func(t *testing.T) {
			body := e.do(t, req{target: target}).Body.String()
			for _, bad := range []string{"<script>" + marker, "<img src=x", "<iframe", "<svg onload", `href="javascript`} {
				if strings.Contains(body, bad) {
					t.Errorf("%s passes %q through", target, bad)
				}
			}
			if !strings.Contains(body, "&lt;script&gt;") && !strings.Contains(body, `\u003cscript\u003e`) {
				t.Errorf("%s does not show the escaped payload", target)
			}
		})
	}

	w := e.do(t, req{target: "/"})
	for h, want := range map[string]string{
		"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
	} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	// Assets are versioned by content hash.
	m := regexp.MustCompile(`src="(/static/app\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatal("no versioned app.js in the page")
	}
	js := e.do(t, req{target: m[1]})
	if js.Code != 200 || !strings.Contains(js.Header().Get("Cache-Control"), "immutable") || !strings.Contains(js.Header().Get("Content-Type"), "javascript") {
		t.Errorf("app.js = %d %q %q", js.Code, js.Header().Get("Cache-Control"), js.Header().Get("Content-Type"))
	}
	if w := e.do(t, req{target: "/static/nope.js"}); w.Code != 404 {
		t.Errorf("unknown asset = %d", w.Code)
	}
}

// TestSettingsPatchRefusesDuplicateKeys: a key given twice in one object
// of a settings PATCH (or any JSON body) is refused with 400, whichever
// spelling the second one has; config.toml is left alone. The same key in
// two different objects is not a duplicate.
func TestSettingsPatchRefusesDuplicateKeys(t *testing.T) {
	e := newEnv(t, web.Deps{})
	before, _ := os.ReadFile(e.a.Home().ConfigPath())
	for _, body := range []string{
		`{"reflector": {"recent_keep": 3, "recent_keep": 0}}`,
		`{"reflector": {"recent_keep": 3, "Recent_Keep": 7}}`,
		`{"reflector": {"recent_keep": 3}, "reflector": {"enabled": false}}`,
		`{"reflector": {"interval": "1h", "enabled": true, "interval": "2h"}}`,
	} {
		w := e.do(t, req{method: "PATCH", target: "/api/v1/settings", body: body, hdr: map[string]string{"Content-Type": "application/json"}})
		wantError(t, w, http.StatusBadRequest, "given twice")
	}
	if now, _ := os.ReadFile(e.a.Home().ConfigPath()); string(now) != string(before) {
		t.Error("a refused settings update changed config.toml")
	}
	w := e.do(t, req{method: "POST", target: "/api/v1/agents/coder/condense", body: `{"dry_run": true, "dry_run": false}`, hdr: map[string]string{"Content-Type": "application/json"}})
	wantError(t, w, http.StatusBadRequest, "given twice")
	w = e.do(t, req{method: "PATCH", target: "/api/v1/settings", body: `{"reflector": {"recent_keep": 4, "retention": 5}}`, hdr: map[string]string{"Content-Type": "application/json"}})
	if w.Code != http.StatusOK {
		t.Fatalf("a PATCH without duplicates: %d %s", w.Code, w.Body.String())
	}
}

// TestEventsWithAFIFOLog: a FIFO planted at the event log gives the
// events route a clear error at once instead of a request that never
// ends.
func TestEventsWithAFIFOLog(t *testing.T) {
	e := newEnv(t, web.Deps{})
	path := e.a.Home().LogPath()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() { // let go of a reader stuck on it, if any
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- e.do(t, req{target: "/api/v1/events"}) }()
	select {
	case w := <-done:
		if w.Code < 400 || !strings.Contains(w.Body.String(), "not a regular file") {
			t.Errorf("events with a FIFO log: %d %s", w.Code, w.Body.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GET /api/v1/events hangs on a FIFO at the event log")
	}
}

// TestManagerStatusRoute: GET /api/v1/manager is the manager's status as
// Deps.ManagerStatus gives it, and a 404 without a manager.
func TestManagerStatusRoute(t *testing.T) {
	with := newEnv(t, web.Deps{ManagerStatus: func(context.Context) app.ManagerStatus { return app.ManagerStatus{Runtime: app.Runtime{PID: 4242}} }})
	if w := with.do(t, req{target: "/api/v1/manager"}); w.Code != 200 || decode[map[string]any](t, w)["pid"] != float64(4242) {
		t.Errorf("GET /api/v1/manager with a manager: %d %s", w.Code, w.Body.String())
	}
	without := newEnv(t, web.Deps{})
	if w := without.do(t, req{target: "/api/v1/manager"}); w.Code != 404 || !strings.Contains(decode[map[string]string](t, w)["error"], "no manager") {
		t.Errorf("GET /api/v1/manager without a manager: %d %s", w.Code, w.Body.String())
	}
}

// TestAPIRoutesAreServedAndDocumented: every route of web.APIRoutes
// reaches a handler of its own (not the /api/ catch-all), and docs/api.md's
// endpoint table lists exactly these routes, in this order.
func TestAPIRoutesAreServedAndDocumented(t *testing.T) {
	e := newEnv(t, web.Deps{ManagerStatus: func(context.Context) app.ManagerStatus { return app.ManagerStatus{} }})
	fill := strings.NewReplacer("{agent}", "nobody", "{backup}", "none.md")
	for _, rt := range web.APIRoutes() {
		method, path, _ := strings.Cut(rt, " ")
		if strings.HasSuffix(path, "/stream") {
			method = http.MethodHead // the headers only, not a live stream
		}
		w := e.do(t, req{method: method, target: fill.Replace(path), body: "{}"})
		if strings.Contains(w.Body.String(), "no API endpoint") || w.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s: %d %s", rt, w.Code, w.Body.String())
		}
	}
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| (GET|POST|PATCH) \\| `(/api/v1[^`]*)` \\|").FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1]+" "+m[2])
	}
	if got, want := strings.Join(listed, "\n"), strings.Join(web.APIRoutes(), "\n"); got != want {
		t.Errorf("docs/api.md lists\n%s\nwant (web.APIRoutes)\n%s", got, want)
	}
}

// TestAgentSummaryExtendsAgentStatus: an agent of /api/v1/agents is the
// agent of /api/v1/status (app.AgentStatus, as the CLI and MCP give it)
// with the dashboard's grades added: every field of the one is in the
// other under the same name, with the same value.
func TestAgentSummaryExtendsAgentStatus(t *testing.T) {
	manager := func(context.Context) app.ManagerStatus {
		return app.ManagerStatus{Agents: []app.AgentStatus{{Agent: "researcher", MiningBackoff: &app.Backoff{
			Failures: 3, LastError: "disk full", NextAttempt: time.Date(2026, 11, 29, 15, 43, 0, 0, time.UTC), LastFailure: time.Date(2026, 11, 29, 15, 38, 0, 0, time.UTC)}}}}
	}
	e := newEnv(t, web.Deps{ManagerStatus: manager})
	byAgent := func(target string) map[string]map[string]any {
		var doc struct{ Agents []map[string]any }
		if err := json.Unmarshal(e.do(t, req{target: target}).Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]any{}
		for _, a := range doc.Agents {
			out[a["agent"].(string)] = a
		}
		return out
	}
	status, dashboard := byAgent("/api/v1/status"), byAgent("/api/v1/agents")
	if len(status) != 5 || len(dashboard) != 5 {
		t.Fatalf("%d agents in the status, %d on the dashboard", len(status), len(dashboard))
	}
	for id, st := range status {
		for k, v := range st {
			if got, ok := dashboard[id][k]; !ok || !reflect.DeepEqual(got, v) {
				t.Errorf("%s: status has %s = %v, the dashboard %v (present: %v)", id, k, v, got, ok)
			}
		}
	}
	if b, _ := dashboard["tester"]["reflector_backoff"].(map[string]any); b["failures"] != float64(2) {
		t.Errorf("tester's reflector backoff on the dashboard: %v", dashboard["tester"])
	}
	if b, _ := dashboard["researcher"]["mining_backoff"].(map[string]any); b["last_failure"] == nil {
		t.Errorf("researcher's mining backoff on the dashboard: %v", dashboard["researcher"])
	}
}

// TestSearchPageAsOf: the search page's "as of" field is the API's as_of,
// passed to the same app request: a query naming a time ranks the
// sections dated then first, counted from that day; the field keeps the
// date; a bad date is the form's error.
func TestSearchPageAsOf(t *testing.T) {
	e := newEnv(t, web.Deps{})
	// The tester's "nightly run" sections are dated every sixth day from
	// Today-32; the one of Today-20 is "yesterday" as of Today-19.
	asOf := webtest.Today.AddDate(0, 0, -19).Format(time.DateOnly)
	yesterday := webtest.Today.AddDate(0, 0, -20).Format(time.DateOnly)
	dateChip := regexp.MustCompile(`<span class="chip">(\d{4}-\d{2}-\d{2})</span>`)
	first := func(target string) (string, string) {
		t.Helper()
		w := e.do(t, req{target: target})
		body := w.Body.String()
		if w.Code != 200 {
			t.Fatalf("%s = %d: %.300s", target, w.Code, body)
		}
		m := dateChip.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no dated hit", target)
		}
		return m[1], body
	}
	got, body := first("/search?q=nightly+run+yesterday&agent=tester&as_of=" + asOf)
	if got != yesterday {
		t.Errorf("as of %s, the first hit of \"nightly run yesterday\" is dated %s, want %s", asOf, got, yesterday)
	}
	if want := `name="as_of" value="` + asOf + `"`; !strings.Contains(body, want) {
		t.Errorf("the form lacks %s", want)
	}
	// The same query as of another day ranks another section first: the
	// date comes from the field, not from the text.
	if got, _ := first("/search?q=nightly+run+yesterday&agent=tester&as_of=" + webtest.Today.AddDate(0, 0, -1).Format(time.DateOnly)); got == yesterday {
		t.Errorf("as of the day before Today, the first hit is still dated %s", got)
	}

	w := e.do(t, req{target: "/search?q=nightly+run&as_of=2026-13-01"})
	body = w.Body.String()
	if w.Code != 400 || !strings.Contains(body, `class="alert bad" role="alert">search: as of date`) {
		t.Errorf("bad as_of = %d, want 400 with the as of date error on the form: %.600s", w.Code, body)
	}
	if !strings.Contains(body, `name="as_of" value="2026-13-01"`) {
		t.Error("the form does not keep the bad date to correct")
	}
}
