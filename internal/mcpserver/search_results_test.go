package mcpserver_test

import (
	"testing"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestSearchDefaultResults: memory_search without results returns as many
// hits as search.results says (within the tool's cap); an explicit results
// wins.
func TestSearchDefaultResults(t *testing.T) {
	a := newHome(t, testFiles, true)
	args := map[string]any{"query": "login"}
	cs := connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) < 2 {
		t.Fatalf("%d hits for login with the default config, want at least 2", len(out.Hits))
	}
	a.Config.Search.Results = 1
	cs = connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) != 1 {
		t.Errorf("search.results = 1: %d hits", len(out.Hits))
	}
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "results": 2}); len(out.Hits) != 2 {
		t.Errorf("search.results = 1, results 2: %d hits", len(out.Hits))
	}
	// A setting above the tool's cap is capped, not an error.
	a.Config.Search.Results = 1000
	cs = connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) < 2 || len(out.Hits) > mcpserver.MaxResults {
		t.Errorf("search.results = 1000: %d hits", len(out.Hits))
	}
}
