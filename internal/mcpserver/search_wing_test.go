package mcpserver_test

import (
	"testing"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestSearchOwnWingBeforeFirstNote: a server bound to an agent that has no
// memory file yet answers a search in its own wing (the default in scope
// own) with no hits, not "unknown wing"; another unknown wing is refused.
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
	// A known wing whose filter matches nothing is an empty result.
	out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "wing": "alice", "since": "2030-01-01"})
	if len(out.Hits) != 0 {
		t.Errorf("hits after 2030: %+v", out.Hits)
	}
}
