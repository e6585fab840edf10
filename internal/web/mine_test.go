package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/web"
)

// TestMineNow: POST /api/v1/mine mines the whole hive or one agent at
// once, logs a mine event when something changed, and is refused while
// manager.mining is off.
func TestMineNow(t *testing.T) {
	e := newEnv(t, web.Deps{})
	w := e.do(t, req{method: "POST", target: "/api/v1/mine"})
	if w.Code != 200 {
		t.Fatalf("mine the hive = %d %s", w.Code, w.Body)
	}
	if r := decode[web.MineResponse](t, w); r.Path != "hive" || r.Report.Files < 4 || r.Agent != "" {
		t.Errorf("mine the hive = %+v", r)
	}

	p, err := e.a.Home.MemoryPath("coder")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## 2026-12-01 — quasar cache\nThe quasar cache is warmed at deploy.\n")
	f.Close()
	w = e.do(t, req{method: "POST", target: "/api/v1/mine", body: `{"agent": "coder"}`})
	r := decode[web.MineResponse](t, w)
	if w.Code != 200 || r.Agent != "coder" || r.Path != "hive/agents/coder" || r.Report.Changed != 1 || r.Report.Added < 1 {
		t.Fatalf("mine coder = %d %+v", w.Code, r)
	}
	evs, _ := e.a.Events.Read(1, func(ev eventlog.Event) bool { return ev.Kind == "mine" })
	if len(evs) != 1 || evs[0].Agent != "coder" || evs[0].Data["by"] != "api" {
		t.Errorf("mine events = %+v", evs)
	}
	sw := e.do(t, req{target: "/api/v1/search?q=quasar"})
	if sw.Code != 200 || !strings.Contains(sw.Body.String(), "quasar cache") {
		t.Errorf("search after mine now = %d %s", sw.Code, sw.Body)
	}

	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"unknown agent", `{"agent": "nobody"}`, 404},
		{"bad agent id", `{"agent": "../etc"}`, 400},
		{"unknown field", `{"wing": "x"}`, 400},
	} {
		if w := e.do(t, req{method: "POST", target: "/api/v1/mine", body: c.body}); w.Code != c.status {
			t.Errorf("%s: = %d, want %d: %s", c.name, w.Code, c.status, w.Body)
		}
	}

	e2 := newEnv(t, web.Deps{})
	if w := e2.do(t, req{method: "PATCH", target: "/api/v1/settings", body: `{"manager": {"mining": false}}`}); w.Code != 200 {
		t.Fatalf("mining off = %d %s", w.Code, w.Body)
	}
	if w := e2.do(t, req{method: "POST", target: "/api/v1/mine"}); w.Code != 409 || !strings.Contains(w.Body.String(), "manager.mining") {
		t.Errorf("mine with mining off = %d %s", w.Code, w.Body)
	}
	if w := e2.do(t, req{target: "/"}); w.Code != 200 || !strings.Contains(w.Body.String(), `data-mine=""`) {
		t.Errorf("overview has no mine-now button")
	}
}
