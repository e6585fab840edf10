package apptest

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

// MCPClient builds the MCP server from deps and connects a client to it
// over the SDK's in-memory transport. The client is closed, and the
// server session waited for, when the test ends.
func MCPClient(t testing.TB, deps mcpserver.Deps) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}
