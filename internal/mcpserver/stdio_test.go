package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// TestStdioTransportDropsAnOverlongLine: a line longer than
// MaxStdioLineBytes is read to its end, answered with an invalid-request
// error with id null, and the next message is served; the SDK's own
// transport ends the session on it.
func TestStdioTransportDropsAnOverlongLine(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Deps{App: newHome(t, testFiles, true)})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.Connect(ctx, mcpserver.StdioTransport(inR, outW, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("answer %q: %v", l, err)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer within 20s")
		}
		return nil
	}
	go func() {
		long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcpserver.MaxStdioLineBytes) + `"}}` + "\n"
		io.WriteString(inW, long)
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	a := next()
	e, _ := a["error"].(map[string]any)
	if a["id"] != nil || e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "longer than") {
		t.Fatalf("answer to the overlong line: %v", a)
	}
	if a := next(); a["id"] != float64(2) || a["error"] != nil {
		t.Fatalf("ping after the overlong line: %v", a)
	}
	inW.Close()
}
