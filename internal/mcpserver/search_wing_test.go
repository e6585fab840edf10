package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestSearchOwnWingBeforeFirstNote: a server bound to an agent that has no
// memory file yet answers a search in its own wing (the default in scope
// own) with no hits, not "unknown wing"; another unknown wing (or agent) is
// refused.
func TestSearchOwnWingBeforeFirstNote(t *testing.T) {
	a := newHome(t, testFiles, true)
	for _, scope := range []string{mcpserver.ScopeOwn, mcpserver.ScopeAll} {
		cs := connect(t, mcpserver.Deps{App: a, Agent: "newbie", Scope: scope})
		args := map[string]any{"query": "login"}
		if scope == mcpserver.ScopeAll {
			args["wing"] = "newbie"
		}
		out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args)
		if len(out.Hits) != 0 {
			t.Errorf("scope %s: hits in an empty wing: %+v", scope, out.Hits)
		}
	}
	cs := connect(t, mcpserver.Deps{App: a, Agent: "newbie"})
	fails(t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "wing": "alise"}, `unknown wing "alise"`)
	// The same for an agent filter: its own is empty, a typo refused.
	all := connect(t, mcpserver.Deps{App: a, Agent: "newbie", Scope: mcpserver.ScopeAll})
	if out := ok[mcpserver.SearchOutput](t, all, mcpserver.ToolSearch, map[string]any{"query": "login", "agent": "newbie"}); len(out.Hits) != 0 {
		t.Errorf("hits for an agent with no memory: %+v", out.Hits)
	}
	fails(t, all, mcpserver.ToolSearch, map[string]any{"query": "login", "agent": "alise"}, `unknown agent "alise"`)
	// A known wing whose filter matches nothing is an empty result.
	out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "wing": "alice", "since": "2030-01-01"})
	if len(out.Hits) != 0 {
		t.Errorf("hits after 2030: %+v", out.Hits)
	}
}

// TestSearchUnknownWing: memory_search with a wing no drawer has (a
// typo of an agent id) answers an empty success; memory_wake_up answers the
// same wing with the tool error "unknown wing".
func TestSearchUnknownWing(t *testing.T) {
	cs := connect(t, mcpserver.Deps{App: newHome(t, testFiles, true)})
	fails(t, cs, mcpserver.ToolWakeUp, map[string]any{"wing": "alise"}, "unknown wing")
	res := call(t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "wing": "alise"})
	if !res.IsError {
		t.Fatalf("search in the unknown wing %q succeeded with %s; want a tool error naming the wing", "alise", text(res))
	}
	if !strings.Contains(text(res), "alise") {
		t.Fatalf("error %q does not name the wing", text(res))
	}
}
