package mcpserver_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// fixedNow dates every remembered section in the tests.
var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// repoRoot is the module root (tests run in internal/mcpserver).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", dir, err)
	}
	return dir
}

// newHome opens a fresh home in a temp dir with the given memory files
// (agent → content) mined. lexical forces lexical-only search, so results
// do not depend on whether the model is installed.
func newHome(t testing.TB, files map[string]string, lexical bool) *app.App {
	t.Helper()
	return apptest.MinedApp(t, files, lexical)
}

// demoFiles reads the demo hive in examples/hive/agents.
func demoFiles(t testing.TB) map[string]string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "examples", "hive", "agents")
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "memory.md" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.Base(filepath.Dir(path))] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no memory files in %s", dir)
	}
	return files
}

// connect runs a server for deps and returns a client session talking to
// it over the SDK's in-memory transport.
func connect(t testing.TB, deps mcpserver.Deps) *mcp.ClientSession {
	t.Helper()
	if deps.Now == nil {
		deps.Now = func() time.Time { return fixedNow }
	}
	return apptest.MCPClient(t, deps)
}

// call calls a tool; a protocol error fails the test (tool errors are
// results with IsError).
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok calls a tool that must succeed and decodes its structured output.
func ok[T any](t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	var out T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return out
}

// fails calls a tool that must fail with a tool error containing want.
func fails(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, want string) {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want a tool error containing %q; got %s", name, args, want, text(res))
	}
	if got := text(res); !strings.Contains(got, want) {
		t.Fatalf("%s(%v) error = %q, want it to contain %q", name, args, got, want)
	}
}

// refusal is one bad call of a tool: its arguments and what its tool
// error must contain.
type refusal struct {
	name string
	args map[string]any
	want string
}

// failsAll runs each refusal of tool as a subtest named for it (fails).
func failsAll(t *testing.T, cs *mcp.ClientSession, tool string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fails(t, cs, tool, c.args, c.want) })
	}
}

// testFiles is a small hive: alice has every region, bob plain sections.
var testFiles = map[string]string{
	"alice": "# Memory — Alice (alice)\nheader note\n\n" +
		"## 📌 Durable facts (pinned — never condensed)\n- Releases ship on Tuesdays.\n" +
		"## 🗜 Condensed history\n- 2026-10: moved the queue to PostgreSQL.\n" +
		"## Recent\n" +
		"## 2026-11-20 — fixed flaky login test\nThe session cookie had a one-second expiry skew.\n\n" +
		"## 2026-11-22 — rate limiter rewrite\nToken bucket per API key, burst 50.\n\n" +
		"## 2026-11-25 — login page redesign\nNew layout for the login form.\n",
	"bob": "# Memory — Bob (bob)\n\n" +
		"## 2026-11-21 — review of billing export\nThe billing export streams CSV now; approved.\n",
}
