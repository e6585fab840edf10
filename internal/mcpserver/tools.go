package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
)

// Tool names, as clients call them.
const (
	ToolSearch   = "memory_search"
	ToolWakeUp   = "memory_wake_up"
	ToolRemember = "memory_remember"
	ToolPin      = "memory_pin"
	ToolRead     = "memory_read"
	ToolStatus   = "memory_status"
	ToolCondense = "memory_condense"
)

// SearchInput is memory_search's arguments.
type SearchInput struct {
	Query   string `json:"query" jsonschema:"what to look for, in plain words (at most 4096 bytes); matched by keywords and by meaning (not a query language)"`
	Wing    string `json:"wing,omitempty" jsonschema:"only this wing (a wing is usually an agent id)"`
	Room    string `json:"room,omitempty" jsonschema:"only this room: pinned, condensed, recent, archive, header, session (imported conversations), or one given to mine --room"`
	Agent   string `json:"agent,omitempty" jsonschema:"only memory written by this agent id"`
	Results *int   `json:"results,omitempty" jsonschema:"how many hits to return, 1 to 100 (default: the server's search.results setting, 5 unless configured)"`
	Since   string `json:"since,omitempty" jsonschema:"only sections dated on or after this day (YYYY-MM-DD)"`
	Until   string `json:"until,omitempty" jsonschema:"only sections dated on or before this day (YYYY-MM-DD)"`
	Mode    string `json:"mode,omitempty" jsonschema:"hybrid (keywords and meaning; the default with an embedding model), lexical (keywords only) or vector (meaning only)"`
	AsOf    string `json:"as_of,omitempty" jsonschema:"the day the query is asked (YYYY-MM-DD; default today): a time the query names, such as last week or two months ago, is counted from it, and sections dated then rank higher"`
	// IncludeSuperseded: see app.SearchRequest.
	IncludeSuperseded bool `json:"include_superseded,omitempty" jsonschema:"also search sections marked as superseded by a later one (left out by default)"`
}

// SearchOutput is memory_search's result, best hit first: the app's
// search result, the same object as `hivemem search --json` and GET
// /api/v1/search.
type SearchOutput = app.SearchResult

// WakeUpInput is memory_wake_up's arguments.
type WakeUpInput struct {
	Wing   string `json:"wing,omitempty" jsonschema:"whose digest: an agent id or wing (default: your own agent, or the hive overview when the server is bound to no agent)"`
	Budget *int   `json:"budget,omitempty" jsonschema:"size of the digest in estimated tokens, 1 to 20000 (default 800)"`
	Hive   bool   `json:"hive,omitempty" jsonschema:"one line per agent instead of one agent's digest"`
}

// RememberInput is memory_remember's arguments.
type RememberInput struct {
	Text    string `json:"text" jsonschema:"the note, in markdown (at most 64 KiB); stored verbatim as data (it cannot change the file's structure)"`
	Heading string `json:"heading,omitempty" jsonschema:"a short one-line title; the section is headed '<today> — <heading>' (default: the note's first line)"`
	Agent   string `json:"agent,omitempty" jsonschema:"whose memory to write; needed only when the server is bound to no agent"`
	// Supersedes and Force: see app.RememberRequest.
	Supersedes string `json:"supersedes,omitempty" jsonschema:"drawer id (from memory_search) or heading of an earlier section of your memory that this note replaces: it is marked superseded and left out of search"`
	Force      bool   `json:"force,omitempty" jsonschema:"write the note even if it repeats one you already have (by default a repeat is refused: duplicate is set and nothing is written)"`
}

// SectionInfo locates one section of a memory file.
type SectionInfo = app.SectionInfo

// RememberOutput says where a note went: the app's remember result, the
// same object as `hivemem remember --json`.
type RememberOutput = app.RememberResult

// PinInput is memory_pin's arguments.
type PinInput struct {
	Fact  string `json:"fact" jsonschema:"one durable fact, on one line (a convention, a decision that always holds)"`
	Agent string `json:"agent,omitempty" jsonschema:"whose memory to write; needed only when the server is bound to no agent"`
	// Replaces and Force: see app.PinRequest.
	Replaces string `json:"replaces,omitempty" jsonschema:"a pinned fact that stopped being true: the new fact takes its place, the old one goes to the archive dated today"`
	Force    bool   `json:"force,omitempty" jsonschema:"pin even if a pinned fact already says this in other words"`
}

// PinOutput says whether the fact was new: the app's pin result, the
// same object as `hivemem pin --json`.
type PinOutput = app.PinResult

// ReadInput is memory_read's arguments.
type ReadInput struct {
	Agent   string `json:"agent,omitempty" jsonschema:"whose memory file (default: your own)"`
	Region  string `json:"region,omitempty" jsonschema:"which part: all (default), header, pinned, condensed or recent"`
	Section string `json:"section,omitempty" jsonschema:"one section instead of a region: its heading (or a unique part of it), or any line number inside it"`
}

// ReadOutput is the text read, with the file's table of contents.
type ReadOutput struct {
	Agent     string        `json:"agent"`
	Source    string        `json:"source" jsonschema:"the memory file, relative to the hivemem home"`
	Bytes     int           `json:"bytes" jsonschema:"size of the whole file"`
	Lines     int           `json:"lines" jsonschema:"lines in the whole file"`
	Region    string        `json:"region,omitempty"`
	Section   *SectionInfo  `json:"section,omitempty"`
	StartLine int           `json:"start_line" jsonschema:"first line of text in the file (0 when text is empty)"`
	EndLine   int           `json:"end_line"`
	Text      string        `json:"text" jsonschema:"the bytes of the file read, verbatim"`
	Truncated bool          `json:"truncated" jsonschema:"text was cut at a line boundary; read a section to see the rest"`
	Facts     []string      `json:"facts,omitempty" jsonschema:"region pinned: every durable fact, one per item"`
	Sections  []SectionInfo `json:"sections" jsonschema:"every section of the file, to read one by heading or line"`
}

// StatusInput is memory_status's (empty) arguments.
type StatusInput struct{}

// CondenseInput is memory_condense's arguments.
type CondenseInput struct {
	Agent  string `json:"agent,omitempty" jsonschema:"whose file (default: your own)"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"compute and verify the condensed file but write nothing; the result carries the would-be file"`
	Force  bool   `json:"force,omitempty" jsonschema:"condense even when the file is under its size and section triggers"`
}

// CondenseOutput says what a condensation did: the app's condense
// result, the same object as POST /api/v1/agents/{agent}/condense.
type CondenseOutput = app.CondenseResult

// schemaCache is shared by every server so that the per-identity servers
// of the HTTP handler do not infer the same schemas again.
var schemaCache = mcp.NewSchemaCache()

// inputSchemas are the tools' input schemas, inferred from the input
// types: the SDK refuses an argument of the wrong type or one the tool
// does not have. What a value may be is decided once for the CLI, the HTTP
// API and MCP, by the app (dates, lengths, caps; memory_read's region by
// its handler), with one message, not the validator's (which repeated a
// too-long argument whole, or said "minimum: 0/1 is less than 1.000000");
// no schema refuses an optional string sent empty, which means absent as
// in the API. The descriptions give the ranges. The counts (results,
// budget, n) are pointers so that a 0 given is told from one left out
// (null is left out), as the CLI and the API tell them apart.
type inputSchemas struct {
	search, wakeUp, remember, pin, read, status, condense, events *jsonschema.Schema
}

var loadSchemas = sync.OnceValues(func() (*inputSchemas, error) {
	var s inputSchemas
	var err error
	if s.search, err = inferInput[SearchInput](); err != nil {
		return nil, err
	}
	if s.wakeUp, err = inferInput[WakeUpInput](); err != nil {
		return nil, err
	}
	if s.remember, err = inferInput[RememberInput](); err != nil {
		return nil, err
	}
	if s.pin, err = inferInput[PinInput](); err != nil {
		return nil, err
	}
	if s.read, err = inferInput[ReadInput](); err != nil { // the handler checks the region
		return nil, err
	}
	if s.status, err = inferInput[StatusInput](); err != nil {
		return nil, err
	}
	if s.condense, err = inferInput[CondenseInput](); err != nil {
		return nil, err
	}
	if s.events, err = inferInput[EventsInput](); err != nil {
		return nil, err
	}
	return &s, nil
})

// inferInput infers T's schema (see inputSchemas: no constraints are
// added to it).
func inferInput[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("mcp server: schema of %T: %w", *new(T), err)
	}
	return s, nil
}

// build assembles the server for one identity (d already has defaults).
func build(d Deps) (*mcp.Server, error) {
	sc, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "hivemem", Title: "hivemem — team memory", Version: d.Version},
		&mcp.ServerOptions{Instructions: instructions(d), Logger: sdkLogger(d.Logger), SchemaCache: schemaCache})
	s := &server{d: d}
	no, yes := new(false), new(true)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: no}

	addTool(srv, s, &mcp.Tool{Name: ToolSearch, InputSchema: sc.search, Annotations: readOnly,
		Description: "Search the team's long-term memory (every agent's notes, pinned facts, condensed history and archive) " +
			"by keywords and meaning. Returns the best matching sections, each with its drawer id, source file, heading, " +
			"line range, date and text. Filter by wing, room, agent or date range."}, s.search)
	addTool(srv, s, &mcp.Tool{Name: ToolWakeUp, InputSchema: sc.wakeUp, Annotations: readOnly,
		Description: "Get a short digest to start a session with: an agent's pinned facts, condensed history and the headings " +
			"of its newest sections, within a token budget. Call it first in a new session. hive=true gives one line per agent instead."}, s.wakeUp)
	addTool(srv, s, &mcp.Tool{Name: ToolRemember, InputSchema: sc.remember,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: no, OpenWorldHint: no},
		Description: "Record a note in your memory file: appends a section headed with today's date and the heading, " +
			"and indexes it at once so memory_search finds it. Use it for what you learned, decided or fixed. " +
			"The text is stored verbatim as data."}, s.remember)
	addTool(srv, s, &mcp.Tool{Name: ToolPin, InputSchema: sc.pin,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: no},
		Description: "Pin one durable fact (a convention, a decision that always holds) in your memory file's pinned region, " +
			"which is never condensed and always in the wake-up digest. Pinning a fact already there changes nothing."}, s.pin)
	addTool(srv, s, &mcp.Tool{Name: ToolRead, InputSchema: sc.read, Annotations: readOnly,
		Description: "Read a memory file verbatim: the whole file, one region (header, pinned, condensed, recent) or one " +
			"section by heading or line number (e.g. a heading from memory_search). Also returns the file's table of contents."}, s.read)
	addTool(srv, s, &mcp.Tool{Name: ToolStatus, InputSchema: sc.status, Annotations: readOnly,
		Description: "Show the memory home: agents with file size against the condensation budget, sections, pinned facts " +
			"and search drawers; index size; whether search is hybrid or lexical-only."}, s.status)
	addTool(srv, s, &mcp.Tool{Name: ToolCondense, InputSchema: sc.condense,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: yes, OpenWorldHint: no},
		Description: "Condense a memory file that outgrew its budget: the oldest sections go verbatim to the archive (still " +
			"searchable), are summarised into the condensed history, and the newest stay as they are; verified and backed up " +
			"first. Skips files under their triggers unless force; dry_run shows the result without writing."}, s.condense)
	addTool(srv, s, &mcp.Tool{Name: ToolEvents, InputSchema: sc.events, Annotations: readOnly,
		Description: "List the newest events of the hive log, shared with the agent harness: mines, condensations and " +
			"their aborts, restores, and the harness's own events (spawn, session, ...), each with its time, kind, agent and fields."}, s.events)
	if err := addCorrectionTools(srv, s); err != nil {
		return nil, err
	}
	if err := addPurgeTool(srv, s); err != nil {
		return nil, err
	}
	return srv, nil
}

// handler is a tool's work: its structured output, optionally a text to
// show instead of the JSON (a digest, the text read), or an error that the
// client sees as a tool error.
type handler[In, Out any] func(ctx context.Context, in In) (out Out, text string, err error)

// addTool registers h with logging of every call; an error becomes a tool
// result with isError set and the error as its text.
func addTool[In, Out any](srv *mcp.Server, s *server, t *mcp.Tool, h handler[In, Out]) {
	mcp.AddTool(srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		start := time.Now()
		out, text, err := h(ctx, in)
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			var zero Out
			return nil, zero, s.toolError(t.Name, ms, err)
		}
		s.d.Logger.Debug("mcp tool call", "tool", t.Name, "agent", s.d.Agent, "ms", ms)
		if text == "" {
			return nil, out, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

// toolError is the one place MCP maps the app's error kinds: every error
// reaches the client as a tool error (isError, its message as the text),
// never a protocol error, so that the model reads why and can ask again
// better. A refusal (bad input, not found, conflict, unavailable: the
// kinds of app.Kind) is logged at info, a failure of none at warn.
func (s *server) toolError(tool string, ms float64, err error) error {
	if k := app.Kind(err); k != nil {
		s.d.Logger.Info("mcp tool call refused", "tool", tool, "agent", s.d.Agent, "ms", ms, "kind", k.Error(), "error", err)
	} else {
		s.d.Logger.Warn("mcp tool call failed", "tool", tool, "agent", s.d.Agent, "ms", ms, "error", err)
	}
	return err
}

// value is a count argument's value, 0 when it was left out.
func value(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// scope is the server's identity as the app's request scope.
func (s *server) scope() app.Scope {
	return app.Scope{Caller: s.d.Agent, Own: s.d.Scope == ScopeOwn}
}

func (s *server) search(ctx context.Context, in SearchInput) (SearchOutput, string, error) {
	res, err := s.d.App.Search(ctx, app.SearchRequest{Query: in.Query, Mode: in.Mode, Results: value(in.Results), ResultsGiven: in.Results != nil,
		Wing: in.Wing, Room: in.Room, Agent: in.Agent, Since: in.Since, Until: in.Until, AsOf: in.AsOf, IncludeSuperseded: in.IncludeSuperseded,
		MaxResults: MaxResults, Scope: s.scope()})
	if err != nil {
		return SearchOutput{}, "", err
	}
	return res, "", nil
}

func (s *server) wakeUp(ctx context.Context, in WakeUpInput) (app.WakeUpResult, string, error) {
	d, err := s.d.App.WakeUp(ctx, app.WakeUpRequest{Wing: in.Wing, Budget: value(in.Budget), BudgetGiven: in.Budget != nil, Hive: in.Hive,
		MaxBudget: MaxWakeUpBudget, Scope: s.scope()})
	if err != nil {
		return app.WakeUpResult{}, "", err
	}
	return d, d.Text, nil
}

func (s *server) remember(ctx context.Context, in RememberInput) (RememberOutput, string, error) {
	res, err := s.d.App.Remember(ctx, app.RememberRequest{Agent: in.Agent, Text: in.Text, Heading: in.Heading,
		Supersedes: in.Supersedes, Force: in.Force, Now: s.d.Now(), LockWait: lockWait, Scope: s.scope()})
	return res, "", err
}

func (s *server) pin(ctx context.Context, in PinInput) (PinOutput, string, error) {
	res, err := s.d.App.Pin(ctx, app.PinRequest{Agent: in.Agent, Fact: in.Fact, Replaces: in.Replaces, Force: in.Force,
		LockWait: lockWait, Scope: s.scope()})
	return res, "", err
}

func (s *server) condense(ctx context.Context, in CondenseInput) (CondenseOutput, string, error) {
	// A dry run writes nothing, so it is a read: allowed on any agent the
	// scope lets this server read. A real condensation is a write.
	res, err := s.d.App.Condense(ctx, app.CondenseRequest{Agent: in.Agent, DryRun: in.DryRun, Force: in.Force, Scope: s.scope()})
	if err != nil {
		return CondenseOutput{}, "", err
	}
	return res, "", nil
}
