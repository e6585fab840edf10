package web_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/web"
)

// TestMineNow: POST /api/v1/mine mines the whole hive or one agent at
// once, logs a mine event when something changed, and is refused while
// manager.mining is off.
func TestMineNow(t *testing.T) {
	e := newEnv(t, web.Deps{})
	ctx := t.Context()
	r, err := e.c.Mine(ctx, app.MineRequest{})
	if err != nil {
		t.Fatalf("mine the hive: %v", err)
	}
	if r.Path != "hive" || r.Report.Files < 4 || r.Agent != "" {
		t.Errorf("mine the hive = %+v", r)
	}

	f, err := os.OpenFile(apptest.MemoryPath(t, e.a, "coder"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n## 2026-12-01 — quasar cache\nThe quasar cache is warmed at deploy.\n")
	f.Close()
	r, err = e.c.Mine(ctx, app.MineRequest{Agent: "coder"})
	if err != nil || r.Agent != "coder" || r.Path != "hive/agents/coder" || r.Report.Changed != 1 || r.Report.Added < 1 {
		t.Fatalf("mine coder = %v %+v", err, r)
	}
	evs, _ := eventlog.Open(e.a.Home().LogPath()).Read(1, func(ev eventlog.Event) bool { return ev.Kind == "mine" })
	if len(evs) != 1 || evs[0].Agent != "coder" || evs[0].Data["by"] != "api" {
		t.Errorf("mine events = %+v", evs)
	}
	if sr, err := e.c.Search(ctx, app.SearchRequest{Query: "quasar"}); err != nil || len(sr.Hits) == 0 || !strings.Contains(sr.Hits[0].Text, "quasar cache") {
		t.Errorf("search after mine now = %v %+v", err, sr)
	}

	for _, c := range []struct {
		name, agent string
		status      int
	}{
		{"unknown agent", "nobody", 404},
		{"bad agent id", "../etc", 400},
	} {
		var ce *client.Error
		if _, err := e.c.Mine(ctx, app.MineRequest{Agent: c.agent}); !errors.As(err, &ce) || ce.Status != c.status {
			t.Errorf("%s: %v, want a %d", c.name, err, c.status)
		}
	}
	if w := e.do(t, req{method: "POST", target: "/api/v1/mine", body: `{"wing": "x"}`}); w.Code != 400 {
		t.Errorf("unknown field: = %d, want 400: %s", w.Code, w.Body)
	}

	e2 := newEnv(t, web.Deps{})
	off := false
	if _, err := e2.c.UpdateSettings(ctx, app.SettingsRequest{Manager: &app.ManagerPatch{Mining: &off}}); err != nil {
		t.Fatalf("mining off: %v", err)
	}
	var ce *client.Error
	if _, err := e2.c.Mine(ctx, app.MineRequest{}); !errors.As(err, &ce) || ce.Status != 409 || !strings.Contains(ce.Message, "manager.mining") {
		t.Errorf("mine with mining off = %v", err)
	}
	if w := e2.do(t, req{target: "/"}); w.Code != 200 || !strings.Contains(w.Body.String(), `data-mine=""`) {
		t.Errorf("overview has no mine-now button")
	}
}
