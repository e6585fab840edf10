package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/hometest/testenv"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// The tests in this file drive hivemem with the official TypeScript MCP SDK
// (tests/mcp-node, installed by `cd tests/mcp-node && npm ci`, as the README
// says, or scripts/ci-mcp.sh). Without node or the
// installed package they skip, except in CI (CI=true), where they fail.

// hivemem is cmd/hivemem, built by the first hivememBinary.
var hivemem filetest.Built

func TestMain(m *testing.M) {
	testenv.Clear()
	code := m.Run()
	hivemem.Remove()
	os.Exit(code)
}

// hivememBinary builds cmd/hivemem once per test binary.
func hivememBinary(t testing.TB) string {
	t.Helper()
	return hivemem.Path(t, repoRoot(t), "./cmd/hivemem", "hivemem")
}

// nodeClient returns the node binary and the client script, or skips (or,
// in CI, fails) when they cannot run.
func nodeClient(t testing.TB) (node, script string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "tests", "mcp-node")
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH"
	default:
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
			missing = "tests/mcp-node/node_modules is missing"
		}
	}
	if missing != "" {
		msg := missing + ": run `cd tests/mcp-node && npm ci` to install the TypeScript MCP client"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, filepath.Join(dir, "client.mjs")
}

// preparedHome makes a home with files mined (lexical-only if asked) and
// closes it, so another process can open it.
func preparedHome(t testing.TB, files map[string]string, lexical bool) string {
	t.Helper()
	return apptest.MinedHome(t, files, lexical)
}

// nodeSummary is what client.mjs prints.
type nodeSummary struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Tools      []string `json:"tools"`
	Remembered struct {
		Agent   string `json:"agent"`
		Heading string `json:"heading"`
	} `json:"remembered"`
	Search struct {
		Mode string `json:"mode"`
		Hits int    `json:"hits"`
		Top  string `json:"top"`
	} `json:"search"`
	WakeUp   string `json:"wakeUp"`
	BadInput string `json:"badInput"`
}

// runNode runs client.mjs with args and decodes its summary.
func runNode(t *testing.T, env []string, args ...string) nodeSummary {
	t.Helper()
	node, script := nodeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	var s nodeSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("decode summary %q: %v (stderr: %s)", stdout.String(), err, stderr.String())
	}
	if s.Server.Name != "hivemem" || len(s.Tools) != 11 || s.Search.Hits == 0 || s.Search.Top != s.Remembered.Heading ||
		s.Search.Mode != "lexical" || !strings.Contains(s.BadInput, "results") {
		t.Fatalf("summary = %+v", s)
	}
	return s
}

func TestNodeClientStdio(t *testing.T) {
	nodeClient(t) // skip before building when node cannot run
	bin := hivememBinary(t)
	root := preparedHome(t, testFiles, true)
	s := runNode(t, []string{"HIVEMEM_HOME=" + root, "HIVEMEM_MODEL_DIR=" + t.TempDir()},
		"stdio", bin, "mcp", "--agent", "dave", "--scope", "own")
	if s.Remembered.Agent != "dave" || s.WakeUp != "# Wake-up — dave" {
		t.Fatalf("summary = %+v", s)
	}
	data, err := os.ReadFile(filepath.Join(root, "hive", "agents", "dave", "memory.md"))
	if err != nil || !strings.Contains(string(data), "## "+s.Remembered.Heading+"\n") {
		t.Fatalf("dave's file lacks the note (%v):\n%s", err, data)
	}
}

func TestNodeClientHTTP(t *testing.T) {
	nodeClient(t)
	a := newHome(t, testFiles, true)
	url := serveHTTP(t, mcpserver.Deps{App: a}, "n0de-t0ken")
	s := runNode(t, nil, "http", url, mcpserver.AgentHeader+"=erin", "Authorization=Bearer n0de-t0ken")
	if s.Remembered.Agent != "erin" || s.WakeUp != "# Wake-up — erin" {
		t.Fatalf("summary = %+v", s)
	}
	if !strings.Contains(apptest.ReadMemory(t, a, "erin"), "## "+s.Remembered.Heading+"\n") {
		t.Fatal("erin's file lacks the note")
	}
}
