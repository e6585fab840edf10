package cli

import (
	"github.com/hivemem/hivemem/internal/wiring"

	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/mcpserver"
)

type mcpOptions struct {
	agent string
	scope string
}

func newMCPCommand(g *globals) *cobra.Command {
	var o mcpOptions
	cmd := noArgsCommand("mcp", "Serve memory to an AI agent over MCP on stdin/stdout",
		func(ctx context.Context) error { return runMCP(ctx, g, o) })
	cmd.Long = `Serve hivemem's tools over the Model Context Protocol on standard input and
output (logs go to standard error): memory_search, memory_wake_up,
memory_remember, memory_pin, memory_read, memory_status, memory_condense.

--agent binds the server to one agent: remember, pin and condense write to
its memory file and refuse any other. Without --agent they need an agent
argument. --scope own limits every read to the agent's own memory.

The home must exist (hivemem init). Add it to Claude Code with:
claude mcp add hivemem -- hivemem mcp --agent <id>
(see docs/mcp.md for other clients and the HTTP endpoint of hivemem run).`
	cmd.Flags().StringVar(&o.agent, "agent", "", "the agent this server acts for (writes go only to its memory)")
	cmd.Flags().StringVar(&o.scope, "scope", mcpserver.ScopeAll, "what the agent may read: own (its own memory) or all")
	refuseEmpty(cmd, "agent", "scope")
	return cmd
}

// runMCP serves until the client closes stdin or the process is told to
// stop. The home must exist (`hivemem init`), as for every command but
// init, so that a mistyped --home is an error rather than a new home.
func runMCP(ctx context.Context, g *globals, o mcpOptions) error {
	// Check the identity before opening anything.
	if err := mcpserver.CheckIdentity(o.agent, o.scope); err != nil {
		return err
	}
	a, err := g.openWith(ctx, wiring.Options{Home: g.home, Logger: g.logger, LongRunning: true})
	if err != nil {
		return err
	}
	defer a.Close()
	srv, err := mcpserver.New(mcpserver.Deps{App: a, Agent: o.agent, Scope: o.scope, Logger: g.logger, Version: Version})
	if err != nil {
		return err
	}
	g.logger.Info("mcp server on stdio", "agent", o.agent, "scope", o.scope, "home", a.Home().Root, "search", a.SearchMode())
	ss, err := srv.Connect(ctx, mcpserver.StdioTransport(g.stdin, g.stdout, g.logger), nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done: // the client closed stdin
		return err
	case <-ctx.Done(): // interrupted: a normal way to stop a server
		ss.Close()
		<-done
		return nil
	}
}
