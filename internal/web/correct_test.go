package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/web"
)

// The memory viewer offers supersede, forget and purge on each section,
// shows a superseded section as such, and the endpoints behind its
// buttons do what they say (bad input 400, the path's agent wins).
func TestMemoryViewerCorrections(t *testing.T) {
	e := newEnv(t, web.Deps{})
	page := e.do(t, req{target: "/agents/planner"})
	if page.Code != 200 {
		t.Fatalf("viewer: %d", page.Code)
	}
	for _, want := range []string{`class="section-actions" data-heading="`, "act-supersede", "act-forget", "act-purge", `<dialog id="correct-dialog"`, `data-agent="planner"`} {
		if !strings.Contains(page.Body.String(), want) {
			t.Errorf("viewer lacks %q", want)
		}
	}
	if archive := e.do(t, req{target: "/agents/planner/archive/2026-11.md"}); strings.Contains(archive.Body.String(), "act-forget") {
		t.Error("the archive viewer offers corrections")
	}

	rem := e.do(t, req{method: "POST", target: "/api/v1/agents/planner/remember", body: `{"text": "The kickoff moved to Thursday.", "heading": "kickoff"}`})
	if rem.Code != 200 {
		t.Fatalf("remember: %d %s", rem.Code, rem.Body)
	}
	first := decode[app.RememberResult](t, rem)
	sup := e.do(t, req{method: "POST", target: "/api/v1/agents/planner/remember", body: `{"text": "The kickoff moved to Friday.", "supersedes": "kickoff"}`})
	if sup.Code != 200 || decode[app.RememberResult](t, sup).Supersedes == nil {
		t.Fatalf("supersede: %d %s", sup.Code, sup.Body)
	}
	page = e.do(t, req{target: "/agents/planner"})
	if !strings.Contains(page.Body.String(), `title="superseded by `) {
		t.Error("the viewer does not mark the superseded section")
	}

	for _, c := range []struct {
		name, target, body string
		status             int
		want               string
	}{
		{"forget an unknown section", "/api/v1/agents/planner/forget", `{"heading": "no such"}`, 400, "no section"},
		{"purge unconfirmed", "/api/v1/agents/planner/forget", `{"heading": "` + first.Section.Heading + `", "purge": true}`, 400, "confirm"},
		{"another agent in the body", "/api/v1/agents/planner/forget", `{"agent": "coder", "heading": "x"}`, 400, "not the path's"},
		{"unpin a fact not pinned", "/api/v1/agents/planner/unpin", `{"fact": "never pinned"}`, 400, "not a pinned fact"},
		{"unknown field", "/api/v1/agents/planner/pin", `{"fact": "x", "bogus": 1}`, 400, "bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(t, req{method: "POST", target: c.target, body: c.body})
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
				t.Fatalf("%d %s, want %d with %q", w.Code, w.Body, c.status, c.want)
			}
		})
	}
	before := apptest.ReadMemory(t, e.a, "planner")
	fg := e.do(t, req{method: "POST", target: "/api/v1/agents/planner/forget", body: `{"heading": "` + first.Section.Heading + `", "purge": true, "confirm": "planner"}`})
	if fg.Code != http.StatusOK {
		t.Fatalf("purge: %d %s", fg.Code, fg.Body)
	}
	if after := apptest.ReadMemory(t, e.a, "planner"); strings.Contains(after, "Thursday") || !strings.Contains(before, "Thursday") {
		t.Error("the purged section is still in the file")
	}
}
