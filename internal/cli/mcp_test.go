package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// mcpProc is a `hivemem mcp` child process spoken to line by line.
type mcpProc struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	done  chan struct{} // closed when the process has exited
	err   error         // its exit status, once done
	// stderr is what it logged: read it once done.
	stderr *strings.Builder
}

// exited waits up to d for the process to exit and returns its status.
func (p *mcpProc) exited(d time.Duration) (error, bool) {
	select {
	case <-p.done:
		return p.err, true
	case <-time.After(d):
		return nil, false
	}
}

func startMCP(t *testing.T, h *procHome, args ...string) *mcpProc {
	t.Helper()
	cmd := h.cmd(append([]string{"mcp"}, args...)...)
	cmd.Stdin = nil
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, out := filetest.StartPiped(t, cmd)
	p := &mcpProc{t: t, in: in, lines: make(chan string, 16), done: make(chan struct{}), stderr: &stderr}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		in.Close()
		if _, ok := p.exited(30 * time.Second); !ok {
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("mcp stderr:\n%s", stderr.String())
		}
	})
	return p
}

func (p *mcpProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v (process gone?)", line, err)
	}
}

// rpcAnswer is a JSON-RPC response as it comes off the wire.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next reads the next answer; it fails if the process ends or stays silent.
func (p *mcpProc) next() rpcAnswer {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			err, _ := p.exited(30 * time.Second)
			p.t.Fatalf("mcp stdout closed (process exited: %v)", err)
		}
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			p.t.Fatalf("answer %q: %v", line, err)
		}
		return a
	case <-time.After(30 * time.Second):
		p.t.Fatal("no answer from mcp within 30s")
	}
	return rpcAnswer{}
}

func (p *mcpProc) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if a := p.next(); string(a.ID) != "0" || a.Error != nil {
		p.t.Fatalf("initialize: %+v", a)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestMCPStdioAnswersMalformedLinesAndGoesOn: each malformed line sent to
// `hivemem mcp` is answered with a parse or invalid-request error with id
// null, and the server goes on answering the valid request after it.
func TestMCPStdioAnswersMalformedLinesAndGoesOn(t *testing.T) {
	h := newProcHome(t)
	p := startMCP(t, h, "--agent", "alice")
	p.initialize()
	const parse, invalid = -32700, -32600
	for i, c := range []struct {
		name, line string
		code       int
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, parse},
		{"empty array", `[]`, invalid},
		{"missing method", `{"jsonrpc":"2.0","id":1}`, invalid},
		{"missing method, params", `{"jsonrpc":"2.0","id":1,"params":{}}`, invalid},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, invalid},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, invalid},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, invalid},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, invalid},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, invalid},
		{"number method", `{"jsonrpc":"2.0","id":1,"method":7}`, invalid},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, invalid},
		{"NUL bytes", "\x00\x00\x00", parse},
		{"NUL after a message", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\x00", parse},
		{"bare string", `"ping"`, invalid},
		{"bare number", `42`, invalid},
		{"null", `null`, invalid},
		{"two objects on one line", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, parse},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, parse},
		{"not UTF-8 nor JSON", "\xff\xfe{", parse},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.t = t
			p.send(c.line)
			a := p.next()
			if a.Error == nil || a.Error.Code != c.code || string(a.ID) != "null" || a.JSONRPC != "2.0" {
				t.Errorf("answer to %q: %+v, want error %d with id null", c.line, a, c.code)
			}
			id := 100 + i
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
			if a := p.next(); string(a.ID) != fmt.Sprint(id) || a.Error != nil {
				t.Fatalf("ping after %q: %+v", c.line, a)
			}
		})
	}
	p.t = t
	// A response to nothing and a blank line are dropped without an answer;
	// the server is still there for a tool call.
	p.send(`{"jsonrpc":"2.0","id":77,"result":{}}`)
	p.send(``)
	p.send(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"memory_status","arguments":{}}}`)
	if a := p.next(); string(a.ID) != "200" || a.Error != nil || len(a.Result) == 0 {
		t.Fatalf("memory_status: %+v", a)
	}
	p.in.Close()
	if err, ok := p.exited(30 * time.Second); !ok {
		t.Fatal("mcp did not exit when stdin closed")
	} else if err != nil {
		t.Fatalf("mcp exit after stdin closed: %v", err)
	}
}

// TestMCPLogsASkipOnce: a standalone `hivemem mcp` (no manager) whose
// agent's memory file stays skipped (too large) logs the skip once over
// several remembers, each of which mines the file, not at every call.
func TestMCPLogsASkipOnce(t *testing.T) {
	h := newProcHome(t)
	if err := os.WriteFile(filepath.Join(h.root, "config.toml"), []byte("[palace]\nmax_file_bytes = 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := "# Memory — alice (alice)\n\n## 2026-11-01 — old\n" + strings.Repeat("a long line of old notes\n", 60)
	if err := os.MkdirAll(h.agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.mem, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startMCP(t, h, "--agent", "alice")
	p.initialize()
	for i := range 3 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_remember","arguments":{"text":"note %d"}}}`, i+1, i))
		if a := p.next(); string(a.ID) != fmt.Sprint(i+1) || a.Error != nil || !strings.Contains(string(a.Result), fmt.Sprintf(`— note %d\"`, i)) {
			t.Fatalf("remember %d: %+v %s; want the note saved", i, a, a.Result)
		}
	}
	p.in.Close()
	if err, ok := p.exited(30 * time.Second); !ok || err != nil {
		t.Fatalf("mcp exit after stdin closed: %v (exited %v)", err, ok)
	}
	if n := strings.Count(p.stderr.String(), "mine: skipping file"); n != 1 {
		t.Errorf("the skip was logged %d times over three remembers, want once:\n%s", n, p.stderr.String())
	}
}
