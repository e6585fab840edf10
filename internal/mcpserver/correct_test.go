package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// Every correction through a real MCP client: a repeat refused and
// forced, remember with supersedes, pin with replaces, unpin, forget of a
// section and a line, purge with its confirmation, and the scope of an
// agent-bound server.
func TestCorrectionTools(t *testing.T) {
	a := newHome(t, map[string]string{"bob": "# Memory — bob (bob)\n\n## 2026-11-01 — bob's plan\nBob's secret plan.\n"}, true)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "carol", Scope: mcpserver.ScopeOwn})

	first := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "The export timeout is 120 seconds.", "heading": "timeout"})
	dup := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "the export timeout is 120 seconds"})
	if dup.Duplicate == nil || dup.Duplicate.Heading != first.Section.Heading || dup.Section.Heading != "" {
		t.Fatalf("repeat: %+v", dup)
	}
	if strings.Count(apptest.ReadMemory(t, a, "carol"), "120 seconds") != 1 {
		t.Error("a repeat was written")
	}
	forced := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "the export timeout is 120 seconds", "heading": "again", "force": true})
	if forced.Duplicate != nil || forced.Section.Heading == "" {
		t.Errorf("forced: %+v", forced)
	}

	hits := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "export timeout"})
	var oldID string
	for _, h := range hits.Hits {
		if h.Heading == first.Section.Heading {
			oldID = h.ID
		}
	}
	if oldID == "" {
		t.Fatalf("no hit for %q in %+v", first.Section.Heading, hits.Hits)
	}
	sup := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "The export timeout is 300 seconds.", "heading": "timeout now", "supersedes": oldID})
	if sup.Supersedes == nil || sup.Supersedes.Heading != first.Section.Heading {
		t.Fatalf("supersedes: %+v", sup)
	}
	hits = ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "export timeout"})
	for _, h := range hits.Hits {
		if h.ID == oldID || h.SupersededBy != "" {
			t.Errorf("superseded hit returned: %+v", h)
		}
	}
	// The superseded section keeps its drawer id, marked (not its text).
	hits = ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "export timeout", "include_superseded": true})
	if !slices.ContainsFunc(hits.Hits, func(h app.SearchHit) bool { return h.ID == oldID && h.SupersededBy != "" }) {
		t.Errorf("include_superseded found no superseded section %s: %+v", oldID, hits.Hits)
	}

	ok[mcpserver.PinOutput](t, cs, mcpserver.ToolPin, map[string]any{"fact": "Deploys need two approvals"})
	rep := ok[mcpserver.PinOutput](t, cs, mcpserver.ToolPin, map[string]any{"fact": "Deploys need one approval", "replaces": "Deploys need two approvals"})
	if rep.Replaced != "Deploys need two approvals" || rep.Archive == "" || !rep.Added {
		t.Errorf("pin replaces: %+v", rep)
	}
	un := ok[mcpserver.UnpinOutput](t, cs, mcpserver.ToolUnpin, map[string]any{"fact": "Deploys need one approval"})
	if un.Fact != "Deploys need one approval" || un.Pinned != 0 || un.Archive == "" || un.Backup == "" {
		t.Errorf("unpin: %+v", un)
	}
	fails(t, cs, mcpserver.ToolUnpin, map[string]any{"fact": "never pinned"}, "not a pinned fact")

	f := ok[mcpserver.ForgetOutput](t, cs, mcpserver.ToolForget, map[string]any{"heading": "again"})
	if f.Section == nil || f.Kept == "" || f.Backup == "" {
		t.Errorf("forget: %+v", f)
	}
	ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{"text": "token: tok-123-SECRET", "heading": "oops"})
	fails(t, cs, mcpserver.ToolForget, map[string]any{"line": "tok-123-SECRET", "purge": true}, "confirm it with the agent id")
	p := ok[mcpserver.ForgetOutput](t, cs, mcpserver.ToolForget, map[string]any{"line": "tok-123-SECRET", "purge": true, "confirm": "carol"})
	if p.Line == nil || p.Kept != "" {
		t.Errorf("purge: %+v", p)
	}
	if strings.Contains(apptest.ReadMemory(t, a, "carol"), "tok-123") {
		t.Error("purged line still in the file")
	}

	// Scope: carol cannot touch bob's memory.
	fails(t, cs, mcpserver.ToolForget, map[string]any{"agent": "bob", "heading": "bob's plan"}, `writes only to agent "carol"`)
	fails(t, cs, mcpserver.ToolUnpin, map[string]any{"agent": "bob", "fact": "x"}, `writes only to agent "carol"`)
	bobs, err := a.Search(t.Context(), app.SearchRequest{Query: "plan", Agent: "bob"})
	if err != nil || len(bobs.Hits) == 0 {
		t.Fatalf("bob's drawer: %+v, %v", bobs, err)
	}
	fails(t, cs, mcpserver.ToolForget, map[string]any{"drawer": bobs.Hits[0].ID}, "not in agent carol's memory file")
	fails(t, cs, mcpserver.ToolRemember, map[string]any{"text": "mine now", "supersedes": bobs.Hits[0].ID}, "not in agent carol's memory file")
	if !strings.Contains(apptest.ReadMemory(t, a, "bob"), "Bob's secret plan.") {
		t.Error("bob's memory changed")
	}
}
