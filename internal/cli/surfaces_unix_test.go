//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestSurfacesRefuseAFIFOAtMemory: a FIFO planted at an agent's
// memory.md is a clear error ("not a regular file") through the CLI, the
// API and MCP, where an open for reading would block forever; the other
// agents are still listed and read.
func TestSurfacesRefuseAFIFOAtMemory(t *testing.T) {
	s := newSurfaces(t, surfaceFiles)
	dir := filepath.Join(s.root, "hive", "agents", "fifo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "memory.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	const want = "not a regular file"
	// Each call must end: a read that blocks on the FIFO fails the test
	// instead of hanging it.
	within := func(what string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); fn() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still blocked after 30 s (reading the FIFO?)", what)
		}
	}
	agentError := func(what, doc string, list string) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, doc)
		}
		found := false
		for _, x := range m[list].([]any) {
			a := x.(map[string]any)
			if a["agent"] == "fifo" {
				found = true
				if e, _ := a["error"].(string); !strings.Contains(e, want) {
					t.Errorf("%s: agent fifo has error %q, want %q", what, e, want)
				}
			} else if a["error"] != nil {
				t.Errorf("%s: agent %v has an error too: %v", what, a["agent"], a["error"])
			}
		}
		if !found {
			t.Errorf("%s: agent fifo not listed:\n%s", what, doc)
		}
	}

	within("hivemem status", func() { agentError("hivemem status --json", s.cli("status", "--json"), "agents") })
	within("hivemem reflect --dry-run", func() {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"--home", s.root, "reflect", "--dry-run", "fifo"}, strings.NewReader(""), &out, &errOut)
		if code == 0 || !strings.Contains(errOut.String(), want) {
			t.Errorf("hivemem reflect --dry-run fifo: exit %d, stderr %q; want a failure saying %q", code, errOut.String(), want)
		}
	})

	get := func(path string) (int, []byte) {
		return apptest.Do(t, apptest.Request{URL: s.api.URL + path, Timeout: 30 * time.Second})
	}
	within("GET /api/v1/agents", func() {
		_, body := get("/api/v1/agents")
		agentError("GET /api/v1/agents", string(body), "agents")
	})
	for _, path := range []string{"/api/v1/agents/fifo/memory", "/api/v1/agents/fifo"} {
		within("GET "+path, func() {
			code, body := get(path)
			if code == http.StatusOK || !strings.Contains(string(body), want) {
				t.Errorf("GET %s: %d %s; want an error saying %q", path, code, body, want)
			}
		})
	}

	within("MCP memory_status", func() { agentError("memory_status", s.tool(mcpserver.ToolStatus, nil), "agents") })
	within("MCP memory_read", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := s.mcp.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolRead, Arguments: map[string]any{"agent": "fifo"}})
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("memory_read fifo: isError %v, %q; want an error saying %q", res.IsError, text, want)
		}
	})
	// The other agents read as before.
	if m := object(t, s.get("/api/v1/agents/alice/memory")); m["agent"] != "alice" {
		t.Errorf("alice's memory: %v", m)
	}
}

// TestSurfacesStatusWithAFIFOLog: a FIFO planted at the hive log does not
// hang a status through the CLI, the API or MCP: the last condensations
// are unknown, everything else is reported.
func TestSurfacesStatusWithAFIFOLog(t *testing.T) {
	s := newSurfaces(t, surfaceFiles)
	if err := syscall.Mkfifo(filepath.Join(s.root, "hive", "log.jsonl"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for what, fn := range map[string]func() string{
		"hivemem status":     func() string { return s.cli("status", "--json") },
		"GET /api/v1/status": func() string { return s.get("/api/v1/status") },
		"GET /api/v1/agents": func() string { return s.get("/api/v1/agents") },
		"MCP memory_status":  func() string { return s.tool(mcpserver.ToolStatus, nil) },
	} {
		done := make(chan string, 1)
		go func() { done <- fn() }()
		select {
		case doc := <-done:
			if !strings.Contains(doc, `"alice"`) && !strings.Contains(doc, `"agents": 2`) && !strings.Contains(doc, `"agents":2`) {
				t.Errorf("%s: no agents in %s", what, doc)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still blocked after 30 s (reading the FIFO at the log?)", what)
		}
	}
}
