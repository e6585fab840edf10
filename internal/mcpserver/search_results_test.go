package mcpserver_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestSearchDefaultResults: memory_search without results returns as many
// hits as search.results says (within the tool's cap); an explicit results
// wins.
func TestSearchDefaultResults(t *testing.T) {
	a := newHome(t, testFiles, true)
	args := map[string]any{"query": "login"}
	// setResults saves search.results in config.toml and reloads it.
	setResults := func(n int) {
		t.Helper()
		toml := fmt.Sprintf("[embedder]\nprovider = \"none\"\n[search]\nresults = %d\n", n)
		if err := os.WriteFile(a.Home().ConfigPath(), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := a.ReloadSettings(); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) < 2 {
		t.Fatalf("%d hits for login with the default config, want at least 2", len(out.Hits))
	}
	setResults(1)
	cs = connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) != 1 {
		t.Errorf("search.results = 1: %d hits", len(out.Hits))
	}
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "results": 2}); len(out.Hits) != 2 {
		t.Errorf("search.results = 1, results 2: %d hits", len(out.Hits))
	}
	// A setting above the tool's cap is capped, not an error.
	setResults(1000)
	cs = connect(t, mcpserver.Deps{App: a})
	if out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, args); len(out.Hits) < 2 || len(out.Hits) > mcpserver.MaxResults {
		t.Errorf("search.results = 1000: %d hits", len(out.Hits))
	}
}

// TestSearchMarksSupersededHits: memory_search's text content names the
// drawer that supersedes an older statement of the same subject, and the
// newer statement comes first.
func TestSearchMarksSupersededHits(t *testing.T) {
	a := newHome(t, map[string]string{"payops": "# Memory — payops (payops)\n\n" +
		"## 2026-03-10 — payments\n- The payment request timeout is 30 seconds.\n\n" +
		"## 2026-04-15 — billing\n- Reviewed the billing dashboard with Ana.\n\n" +
		"## 2026-06-20 — payments again\n- Raised the payment request timeout from 30 to 45 seconds.\n"}, true)
	cs := connect(t, mcpserver.Deps{App: a})
	res := call(t, cs, mcpserver.ToolSearch, map[string]any{"query": "payment request timeout", "wing": "payops"})
	out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "payment request timeout", "wing": "payops"})
	if len(out.Hits) < 2 || out.Hits[0].Heading != "2026-06-20 — payments again" {
		t.Fatalf("hits %+v: want the newer section first", out.Hits)
	}
	body := text(res)
	if !strings.Contains(body, `"superseded_by":"`+out.Hits[0].ID+`"`) || !strings.Contains(body, `"superseded_reason":"newer"`) {
		t.Errorf("text content does not mark the older hit superseded by %s:\n%s", out.Hits[0].ID, body)
	}
}
