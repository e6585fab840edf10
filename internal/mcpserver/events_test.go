package mcpserver_test

import (
	"os"
	"testing"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestEvents: memory_events lists the shared hive log — the harness's
// lines, hivemem's, and hivemem's older form — skipping and counting a
// malformed line; scope own sees only its agent's events.
func TestEvents(t *testing.T) {
	a := newHome(t, testFiles, true)
	lines := `{"ts":1796119200000,"kind":"spawn","agentId":"alice","engine":"claude"}
{"ts":1796119201000,"kind":"condense-abort","agentId":"bob","reason":"too-small","oldBytes":812}
not json at all
{"time":"2026-12-01T10:00:02Z","type":"restore","agent":"alice","data":{"backup":"x"}}
{"ts":1796119203000,"kind":"drain","agentId":"alice"}
`
	if err := os.WriteFile(a.Home().LogPath(), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	all := ok[mcpserver.EventsOutput](t, connect(t, mcpserver.Deps{App: a}), mcpserver.ToolEvents, nil)
	var kinds []string
	for _, ev := range all.Events {
		kinds = append(kinds, ev.Kind+"/"+ev.Agent)
	}
	if got := len(kinds); got != 4 || kinds[0] != "spawn/alice" || kinds[1] != "condense-abort/bob" || kinds[2] != "restore/alice" || kinds[3] != "drain/alice" || all.Skipped != 1 {
		t.Fatalf("events = %v, skipped %d", kinds, all.Skipped)
	}
	if ev := all.Events[1]; ev.Reason != "too-small" || ev.Data["oldBytes"] != float64(812) || ev.Time.UnixMilli() != 1796119201000 {
		t.Errorf("harness abort = %+v", ev)
	}
	last := ok[mcpserver.EventsOutput](t, connect(t, mcpserver.Deps{App: a}), mcpserver.ToolEvents, map[string]any{"n": 1, "kind": "spawn"})
	if len(last.Events) != 1 || last.Events[0].Data["engine"] != "claude" {
		t.Errorf("n=1 kind=spawn = %+v", last.Events)
	}
	own := ok[mcpserver.EventsOutput](t, connect(t, mcpserver.Deps{App: a, Agent: "bob", Scope: mcpserver.ScopeOwn}), mcpserver.ToolEvents, nil)
	if len(own.Events) != 1 || own.Events[0].Agent != "bob" {
		t.Errorf("own events = %+v", own.Events)
	}
	fails(t, connect(t, mcpserver.Deps{App: a, Agent: "bob", Scope: mcpserver.ScopeOwn}), mcpserver.ToolEvents, map[string]any{"agent": "alice"}, "refused")
	fails(t, connect(t, mcpserver.Deps{App: a}), mcpserver.ToolEvents, map[string]any{"n": 0}, "")
	fails(t, connect(t, mcpserver.Deps{App: a}), mcpserver.ToolEvents, map[string]any{"agent": "../x"}, "agent")
	fails(t, connect(t, mcpserver.Deps{App: a}), mcpserver.ToolEvents, map[string]any{"kind": "Not A Kind"}, "kind")
}
