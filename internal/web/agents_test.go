package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/mcpserver"
	"github.com/hivemem/hivemem/internal/web"
)

// regionFiles are memory files whose sections stand in every region, among
// them a file never condensed and one with a section above its regions,
// where the API's memory view and MCP memory_read once disagreed (the API
// put their sections in no region, memory_read in the recent one).
var regionFiles = map[string]string{
	"plain": "# Memory — Plain (plain)\n\n## 2026-11-20 — first note\nA.\n\n## 2026-11-21 — second note\nB.\n",
	"above": "# Memory — Above (above)\n\n## 2026-11-19 — written above the regions\nX.\n\n" +
		"## 📌 Durable facts (pinned — never condensed)\n- Releases ship on Tuesdays.\n" +
		"## 🗜 Condensed history\n- 2026-10: moved the queue.\n" +
		"## Recent\n## 2026-11-22 — after the marker\nC.\n",
	"condensed": "# Memory — Condensed (condensed)\n\n" +
		"## 📌 Durable facts (pinned — never condensed)\n- Deploys need a review.\n" +
		"## 🗜 Condensed history\n- 2026-09: wrote the parser.\n" +
		"## Recent\n## 2026-11-23 — a recent note\nD.\n",
}

// TestMemoryRegionsAgreeWithMCP: for every region, the sections the API's
// memory view puts in it are the text MCP memory_read returns for it.
func TestMemoryRegionsAgreeWithMCP(t *testing.T) {
	a := apptest.MinedApp(t, regionFiles, true)
	h := web.New(web.Deps{App: a})
	t.Cleanup(h.Close)
	cs := apptest.MCPClient(t, mcpserver.Deps{App: a})
	for agent := range regionFiles {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/api/v1/agents/"+agent+"/memory", nil)
		r.Host = "127.0.0.1:7777"
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: memory view: %d %s", agent, w.Code, w.Body)
		}
		view := decode[web.MemoryView](t, w)
		for _, region := range []string{mcpserver.RegionPinned, mcpserver.RegionCondensed, mcpserver.RegionRecent} {
			t.Run(agent+"/"+region, func(t *testing.T) {
				api := ""
				for _, s := range view.Sections {
					if s.Region == region {
						api += s.Raw
					}
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolRead,
					Arguments: map[string]any{"agent": agent, "region": region}})
				if err != nil || res.IsError {
					t.Fatalf("memory_read: %v %v", err, res)
				}
				var out mcpserver.ReadOutput
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &out); err != nil {
					t.Fatal(err)
				}
				if out.Text != api {
					t.Errorf("region %s: the API's sections hold\n%q\nMCP memory_read returns\n%q", region, api, out.Text)
				}
			})
		}
	}
}
