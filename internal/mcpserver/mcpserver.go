// Package mcpserver serves hivemem's memory to AI agents over the Model
// Context Protocol: search, wake-up, remember, pin, unpin, forget, read,
// status, condense and events as typed tools with JSON schemas, over stdio
// (`hivemem mcp`) or streamable HTTP (HTTPHandler, mounted at /mcp by `hivemem run`).
//
// A server has an identity: the agent it acts for (or none) and a scope.
// An agent-bound server writes only to its own agent's memory file; scope
// "own" also keeps every read inside that agent's wing. Tool input is
// untrusted: ids are validated, sizes capped, and bad input comes back as a
// tool error (isError with a message) rather than a protocol error.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
)

// Scopes: what a server may read.
const (
	// ScopeAll reads every agent's memory (writes stay limited to the
	// bound agent, if any).
	ScopeAll = "all"
	// ScopeOwn reads only the bound agent's wing and file; it needs an agent.
	ScopeOwn = "own"
)

// Limits on tool input, on top of the ones every front end shares (the
// size of a query, of a note), which the app applies.
const (
	// MaxResults caps the hits of one memory_search.
	MaxResults = 100
	// MaxWakeUpBudget caps a wake-up digest, in estimated tokens.
	MaxWakeUpBudget = 20000
	// MaxNameBytes caps wing, room and section arguments.
	MaxNameBytes = app.MaxNameBytes
	// MaxReadBytes caps the text one memory_read returns; a longer region
	// is cut at a line boundary and marked truncated.
	MaxReadBytes = 128 << 10
)

// Deps is what a server needs. App is required; the rest have defaults.
type Deps struct {
	// App is the open home; every tool is one of its operations.
	App *app.App
	// memory_condense is App.Condense; remember and pin are
	// App.Remember and App.Pin, which mine under App's palace write lock.
	// Agent is the agent the server acts for: remember, pin and condense
	// write to it by default and refuse any other agent. "" binds none:
	// write tools then need an explicit agent argument.
	Agent string
	// Scope is ScopeAll (default) or ScopeOwn (requires Agent).
	Scope string
	// Logger receives one line per tool call; nil uses the app's (App.Logger).
	Logger *slog.Logger
	// Version is reported to clients as the server version ("dev" if empty).
	Version string
	// Now is the clock that dates remembered sections (default time.Now).
	Now func() time.Time
}

// check refuses unusable Deps before any client can connect.
func (d Deps) check() error {
	if d.App == nil {
		return errors.New("mcp server: no app (open a hivemem home first)")
	}
	return CheckIdentity(d.Agent, d.Scope)
}

// CheckIdentity validates a server identity (--agent, --scope) on its own,
// so a command can refuse a bad flag before opening the home.
func CheckIdentity(agent, scope string) error {
	if agent != "" {
		if err := home.ValidateAgentID(agent); err != nil {
			return fmt.Errorf("mcp server: --agent: %w", err)
		}
	}
	switch scope {
	case "", ScopeAll:
	case ScopeOwn:
		if agent == "" {
			return errors.New("mcp server: scope own needs an agent (--agent)")
		}
	default:
		return fmt.Errorf("mcp server: unknown scope %q (want own or all)", scope)
	}
	return nil
}

// withDefaults fills the optional fields.
func (d Deps) withDefaults() Deps {
	if d.Scope == "" {
		d.Scope = ScopeAll
	}
	if d.Logger == nil {
		d.Logger = d.App.Logger()
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// New returns an MCP server with hivemem's tools, for d's identity. Run it
// on a transport (mcp.StdioTransport, mcp.IOTransport) or serve it over
// HTTP with HTTPHandler.
func New(d Deps) (*mcp.Server, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	return build(d.withDefaults())
}

// server holds one identity's view of the app; every tool handler is a
// method on it.
type server struct {
	d Deps
}

// lockWait bounds how long a write tool waits for the palace write lock
// before its mine: the manager holds it for one mine at a time, only a
// reindex for minutes.
const lockWait = 2 * time.Minute

// instructions tells the client's model how the tools fit together.
func instructions(d Deps) string {
	var b strings.Builder
	b.WriteString("hivemem is long-term memory shared by a team of AI agents. Each agent keeps a markdown memory file; ")
	b.WriteString("everything is indexed for search. Start a session with memory_wake_up, look things up with memory_search ")
	b.WriteString("(then memory_read for the full section), record what you learn with memory_remember, and durable facts ")
	b.WriteString("(conventions, decisions that always hold) with memory_pin.")
	if d.Agent != "" {
		fmt.Fprintf(&b, " You are agent %q: writes go to your own memory.", d.Agent)
	} else {
		b.WriteString(" This server is not bound to an agent: pass agent to memory_remember, memory_pin and memory_condense.")
	}
	if d.Scope == ScopeOwn {
		b.WriteString(" Reads are limited to your own memory.")
	}
	return b.String()
}

// checkName caps and cleans a free-form name argument (wing, room,
// section) before it reaches a query.
func checkName(what, s string) error {
	return app.CheckName(what, s)
}

// sdkLogger is the logger handed to the SDK. The SDK logs every session's
// connect and disconnect at info level, which over stateless HTTP is
// several lines per request; those become debug, warnings and errors stay.
func sdkLogger(lg *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{lg.Handler()})
}

// demoteInfo is a slog.Handler that turns info records into debug ones.
type demoteInfo struct{ h slog.Handler }

func (d demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	if l == slog.LevelInfo {
		l = slog.LevelDebug
	}
	return d.h.Enabled(ctx, l)
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo {
		r.Level = slog.LevelDebug
	}
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(as []slog.Attr) slog.Handler { return demoteInfo{d.h.WithAttrs(as)} }
func (d demoteInfo) WithGroup(name string) slog.Handler    { return demoteInfo{d.h.WithGroup(name)} }
