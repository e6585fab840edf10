package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/mcpserver"
	"github.com/hivemem/hivemem/internal/redact/redacttest"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/wiring"
)

// surfaces is one home seen through the three front ends: the CLI (its
// Main, --json), the HTTP API (a real server) and MCP (the Go SDK's
// client over in-memory transports).
type surfaces struct {
	t    *testing.T
	root string
	api  *httptest.Server
	mcp  *mcp.ClientSession
}

func newSurfaces(t *testing.T, files map[string]string) *surfaces {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none") // lexical: the same ranking everywhere, no model
	s := &surfaces{t: t, root: filepath.Join(t.TempDir(), "home")}
	s.cli("init")
	for agent, text := range files {
		dir := filepath.Join(s.root, "hive", "agents", agent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "memory.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.cli("mine")
	ctx := context.Background()
	a, err := wiring.Open(ctx, wiring.Options{Home: s.root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s.api = httptest.NewServer(web.New(web.Deps{App: a}))
	t.Cleanup(s.api.Close)
	s.mcp = apptest.MCPClient(t, mcpserver.Deps{App: a})
	return s
}

// cli runs a command and returns its stdout, failing on a non-zero exit.
func (s *surfaces) cli(args ...string) string {
	s.t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), append([]string{"--home", s.root}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
		s.t.Fatalf("hivemem %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// get fetches an API path and returns its body, failing unless 200.
func (s *surfaces) get(path string) string { return s.call(http.MethodGet, path, "") }

// tool calls an MCP tool and returns its structured output as JSON.
func (s *surfaces) tool(name string, args map[string]any) string {
	s.t.Helper()
	res, err := s.mcp.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatal(err)
	}
	if res.IsError {
		s.t.Fatalf("%s: tool error: %+v", name, res.Content)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// object decodes a JSON object, dropping the keys a surface may differ in
// by nature (timings, the dashboard's links).
func object(t *testing.T, doc string, drop ...string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, doc)
	}
	for _, k := range drop {
		delete(m, k)
	}
	if hits, ok := m["hits"].([]any); ok {
		for _, h := range hits {
			delete(h.(map[string]any), "view")
		}
	}
	return m
}

func sameObject(t *testing.T, what string, objs map[string]map[string]any) {
	t.Helper()
	want, wantFrom := objs["cli"], "cli"
	if _, ok := objs["cli"]; !ok {
		want, wantFrom = objs["api"], "api"
	}
	for from, got := range objs {
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s: %s differs from %s:\n%s\n--- %s:\n%s", what, from, wantFrom, g, wantFrom, w)
		}
	}
}

var surfaceFiles = map[string]string{
	"alice": "# Memory — Alice (alice)\n\n## Pinned\n- the staging db is read-only\n\n## 2026-11-20 — fixed flaky login test\nThe login test was flaky: a race on the session cookie.\n\n## 2026-11-22 — login rate limit\nRate limit on the login endpoint.\n",
	"bob":   "# Memory — Bob (bob)\n\n## 2026-11-21 — login page copy\nNew login page wording for the release.\n",
}

// TestSurfacesReturnTheSameObjects: a search, a wake-up and a status
// through `hivemem … --json`, the HTTP API and MCP structured output give
// the same object with the same names (apart from timings and the
// dashboard's links).
func TestSurfacesReturnTheSameObjects(t *testing.T) {
	s := newSurfaces(t, surfaceFiles)

	sameObject(t, "search", map[string]map[string]any{
		"cli": object(t, s.cli("search", "--json", "--results", "3", "login"), "took_ms"),
		"api": object(t, s.get("/api/v1/search?q=login&results=3"), "took_ms"),
		"mcp": object(t, s.tool(mcpserver.ToolSearch, map[string]any{"query": "login", "results": 3}), "took_ms"),
	})
	if hits, _ := object(t, s.cli("search", "--json", "--results", "3", "login"))["hits"].([]any); len(hits) != 3 {
		t.Errorf("search login: %d hits, want 3", len(hits))
	}

	sameObject(t, "wake-up", map[string]map[string]any{
		"cli": object(t, s.cli("wake-up", "--json", "--wing", "alice", "--budget", "500")),
		"api": object(t, s.get("/api/v1/wake-up?wing=alice&budget=500")),
		"mcp": object(t, s.tool(mcpserver.ToolWakeUp, map[string]any{"wing": "alice", "budget": 500})),
	})
	sameObject(t, "hive wake-up", map[string]map[string]any{
		"cli": object(t, s.cli("wake-up", "--json")),
		"api": object(t, s.get("/api/v1/wake-up")),
		"mcp": object(t, s.tool(mcpserver.ToolWakeUp, map[string]any{"hive": true})),
	})

	// Events: the harness's lines and hivemem's, under the same names.
	log := `{"ts":1764600000000,"kind":"spawn","agentId":"alice","pid":42}` + "\n" +
		`{"time":"2026-12-01T10:00:00Z","type":"condense","agent":"bob","data":{"oldBytes":100}}` + "\n" + "not an event\n"
	if err := os.WriteFile(filepath.Join(s.root, "hive", "log.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	sameObject(t, "events", map[string]map[string]any{
		"api": object(t, s.get("/api/v1/events?n=5")), // the CLI has no events command
		"mcp": object(t, s.tool(mcpserver.ToolEvents, map[string]any{"n": 5})),
	})

	// Status: the fields every surface reports, under the same names.
	keep := func(m map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			v, ok := m[k]
			if !ok {
				t.Errorf("status has no %q: %v", k, m)
			}
			out[k] = v
		}
		return out
	}
	common := []string{"home", "search_mode", "embedder", "index", "drawers_without_vectors"}
	cliStatus, mcpStatus := object(t, s.cli("status", "--json")), object(t, s.tool(mcpserver.ToolStatus, nil))
	apiStatus := object(t, s.get("/api/v1/status"))
	sameObject(t, "status", map[string]map[string]any{
		"cli": keep(cliStatus, common...),
		"api": keep(apiStatus, common...),
		"mcp": keep(mcpStatus, common...),
	})
	// Agent status is one computation (app.AgentStatus): every surface
	// lists the same agents with the same fields. (The API's /api/v1/agents
	// adds the dashboard's health grades.)
	sameObject(t, "status agents", map[string]map[string]any{
		"cli": keep(cliStatus, "agents"),
		"api": keep(apiStatus, "agents"),
		"mcp": keep(mcpStatus, "agents"),
	})
	// Status is one computation (app.Status): the same home, index,
	// condensation set-up and mining, under the same names.
	sameObject(t, "status set-up", map[string]map[string]any{
		"cli": keep(cliStatus, "backend", "home_id", "condense", "mining"),
		"api": keep(apiStatus, "backend", "home_id", "condense", "mining"),
		"mcp": keep(mcpStatus, "backend", "home_id", "condense", "mining"),
	})
}

// TestSurfacesWriteTheSameObjects: a remember and a pin through `hivemem
// … --json` and MCP give the same object with the same names. Each
// surface writes to a new agent of its own, so only the agent's name (and
// its file's) differ.
func TestSurfacesWriteTheSameObjects(t *testing.T) {
	s := newSurfaces(t, surfaceFiles)
	named := func(doc, agent string) map[string]any {
		m := object(t, doc)
		if m["agent"] != agent || m["source"] != "hive/agents/"+agent+"/memory.md" {
			t.Errorf("%s: agent or source is not %s's: %v", doc, agent, m)
		}
		delete(m, "agent")
		delete(m, "source")
		return m
	}
	note := "The deploy key rotates monthly.\nAsk ops for the new one."
	sameObject(t, "remember", map[string]map[string]any{
		"cli": named(s.cli("remember", "--json", "--heading", "deploy key", "carol", note), "carol"),
		"mcp": named(s.tool(mcpserver.ToolRemember, map[string]any{"agent": "dave", "text": note, "heading": "deploy key"}), "dave"),
	})
	for _, fact := range []string{"Releases ship on Tuesdays.", "Releases ship on Tuesdays."} { // new, then already there
		sameObject(t, "pin", map[string]map[string]any{
			"cli": named(s.cli("pin", "--json", "carol", fact), "carol"),
			"mcp": named(s.tool(mcpserver.ToolPin, map[string]any{"agent": "dave", "fact": fact}), "dave"),
		})
	}
	if got := object(t, s.tool(mcpserver.ToolSearch, map[string]any{"query": "deploy key rotates", "wing": "carol"})); len(got["hits"].([]any)) == 0 {
		t.Errorf("the CLI's note is not searchable through MCP: %v", got)
	}
}

// post sends a JSON body to an API path and returns the answer, failing
// unless 200.
func (s *surfaces) post(path, body string) string { return s.call(http.MethodPost, path, body) }

func (s *surfaces) call(method, path, body string) string {
	s.t.Helper()
	var hdr map[string]string
	if body != "" {
		hdr = map[string]string{"Content-Type": "application/json"}
	}
	code, b := apptest.Do(s.t, apptest.Request{Method: method, URL: s.api.URL + path, Body: body, Header: hdr})
	if code != http.StatusOK {
		s.t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	return string(b)
}

// TestSurfacesMineAndCondenseTheSameObjects: a mine through `hivemem
// mine --json` and POST /api/v1/mine, and a condensation's dry run
// through `hivemem reflect --json`, the API and MCP, give the same
// objects (apart from timings).
func TestSurfacesMineAndCondenseTheSameObjects(t *testing.T) {
	long := "# Memory — Dora (dora)\n"
	for i := 1; i <= 40; i++ {
		long += fmt.Sprintf("\n## 2026-%02d-%02d — release %d\nRelease %d shipped on time. The rollback plan was rehearsed with the on-call team "+
			"and the staging database was restored from the nightly snapshot. Nobody was paged; the dashboards stayed green all week.\n",
			1+i/28, 1+i%28, i, i)
	}
	s := newSurfaces(t, map[string]string{"alice": surfaceFiles["alice"], "dora": long})
	mine := func(doc string) map[string]any {
		m := object(t, doc)
		delete(m["report"].(map[string]any), "seconds")
		return m
	}
	sameObject(t, "mine", map[string]map[string]any{
		"cli": mine(s.cli("mine", "--json")),
		"api": mine(s.post("/api/v1/mine", "{}")),
	})
	var list []map[string]any
	if err := json.Unmarshal([]byte(s.cli("reflect", "--json", "--dry-run", "--now", "dora")), &list); err != nil || len(list) != 1 {
		t.Fatalf("reflect --json: %v %v", list, err)
	}
	if list[0]["status"] != "dry-run" {
		t.Fatalf("reflect --dry-run --now dora: %v, want a dry run", list[0])
	}
	b, _ := json.Marshal(list[0])
	sameObject(t, "condense dry run", map[string]map[string]any{
		"cli": object(t, string(b), "duration_ms", "diff"),
		"api": object(t, s.post("/api/v1/agents/dora/condense", `{"dry_run": true, "force": true}`), "duration_ms", "diff"),
		"mcp": object(t, s.tool(mcpserver.ToolCondense, map[string]any{"agent": "dora", "dry_run": true, "force": true}), "duration_ms", "diff"),
	})
}

// surfaceRefusal is one bad request made through the three front ends.
type surfaceRefusal struct {
	name   string
	cli    []string
	method string // of the API request; "" is GET
	path   string
	body   string
	tool   string
	args   map[string]any
	status int    // the API's
	want   string // the message of all three
	mcp    string // MCP's, when its cap differs ("": want)
}

// refused runs r on every surface and checks that each refuses it with the
// same message, the API with r.status.
func (s *surfaces) refused(r surfaceRefusal) {
	t := s.t
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), append([]string{"--home", s.root}, r.cli...), strings.NewReader(""), &out, &errOut); code == 0 {
		t.Errorf("CLI %v succeeded: %s", r.cli, out.String())
	} else if lines := strings.Split(strings.TrimSpace(errOut.String()), "\n"); lines[len(lines)-1] != "hivemem: "+r.want {
		t.Errorf("CLI %v: %q, want %q", r.cli, lines[len(lines)-1], "hivemem: "+r.want)
	}
	var hdr map[string]string
	if r.body != "" {
		hdr = map[string]string{"Content-Type": "application/json"}
	}
	code, b := apptest.Do(t, apptest.Request{Method: r.method, URL: s.api.URL + r.path, Body: r.body, Header: hdr})
	var e struct{ Error string }
	if err := json.Unmarshal(b, &e); err != nil || code != r.status || e.Error != r.want {
		t.Errorf("API %s: %d %s, want %d %q", r.path, code, b, r.status, r.want)
	}
	res, err := s.mcp.CallTool(context.Background(), &mcp.CallToolParams{Name: r.tool, Arguments: r.args})
	want := cmp.Or(r.mcp, r.want)
	switch {
	case err != nil:
		t.Errorf("MCP %s: %v", r.tool, err)
	case !res.IsError:
		t.Errorf("MCP %s %v succeeded", r.tool, r.args)
	case len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want:
		t.Errorf("MCP %s %v: %+v, want %q", r.tool, r.args, res.Content, want)
	}
}

// TestSurfacesRefuseTheSameWay: the same bad input is refused by the CLI,
// the HTTP API and MCP with the same message, the app's (what it says and
// which parameter, in words of no one surface), and empty optional values
// mean "left out" on all three.
func TestSurfacesRefuseTheSameWay(t *testing.T) {
	s := newSurfaces(t, surfaceFiles)
	for _, r := range []surfaceRefusal{
		{name: "as of month 13", cli: []string{"search", "login", "--as-of", "2023-13-01"}, path: "/api/v1/search?q=login&as_of=2023-13-01",
			tool: mcpserver.ToolSearch, args: map[string]any{"query": "login", "as_of": "2023-13-01"},
			status: 400, want: `search: as of date "2023-13-01" is not a day (want YYYY-MM-DD)`},
		{name: "since not a date", cli: []string{"search", "login", "--since", "yesterday"}, path: "/api/v1/search?q=login&since=yesterday",
			tool: mcpserver.ToolSearch, args: map[string]any{"query": "login", "since": "yesterday"},
			status: 400, want: `search: since date "yesterday" is not a day (want YYYY-MM-DD)`},
		{name: "unknown mode", cli: []string{"search", "login", "--mode", "bogus"}, path: "/api/v1/search?q=login&mode=bogus",
			tool: mcpserver.ToolSearch, args: map[string]any{"query": "login", "mode": "bogus"},
			status: 400, want: `search: unknown mode "bogus" (want hybrid, lexical or vector)`},
		{name: "results 0", cli: []string{"search", "login", "--results", "0"}, path: "/api/v1/search?q=login&results=0",
			tool: mcpserver.ToolSearch, args: map[string]any{"query": "login", "results": 0},
			status: 400, want: "search: results must be between 1 and 1000, got 0", mcp: "search: results must be between 1 and 100, got 0"},
		{name: "wake-up of a bad id", cli: []string{"wake-up", "Bad..Id"}, path: "/api/v1/wake-up?wing=Bad..Id",
			tool: mcpserver.ToolWakeUp, args: map[string]any{"wing": "Bad..Id"},
			status: 400, want: `wake-up: invalid agent id "Bad..Id": contains ".." (want [a-z0-9][a-z0-9._-]{0,63}); no mined file has it as its wing either`},
		{name: "wake-up of no one", cli: []string{"wake-up", "nobody"}, path: "/api/v1/wake-up?wing=nobody",
			tool: mcpserver.ToolWakeUp, args: map[string]any{"wing": "nobody"},
			status: 404, want: `wake-up: unknown wing "nobody": no agent or mined file has it`},
		{name: "budget 0", cli: []string{"wake-up", "alice", "--budget", "0"}, path: "/api/v1/wake-up?wing=alice&budget=0",
			tool: mcpserver.ToolWakeUp, args: map[string]any{"wing": "alice", "budget": 0},
			status: 400, want: "wake-up: budget must be between 1 and 100000 tokens, got 0", mcp: "wake-up: budget must be between 1 and 20000 tokens, got 0"},
		{name: "remember for a bad id", cli: []string{"remember", "Bad..Id", "a note"}, method: http.MethodPost, path: "/api/v1/agents/Bad..Id/remember", body: `{"text": "a note"}`,
			tool: mcpserver.ToolRemember, args: map[string]any{"agent": "Bad..Id", "text": "a note"},
			status: 400, want: `remember: invalid agent id "Bad..Id": contains ".." (want [a-z0-9][a-z0-9._-]{0,63})`},
		{name: "forget a section not there", cli: []string{"forget", "alice", "--heading", "nope"}, method: http.MethodPost, path: "/api/v1/agents/alice/forget", body: `{"heading": "nope"}`,
			tool: mcpserver.ToolForget, args: map[string]any{"agent": "alice", "heading": "nope"},
			status: 400, want: `forget: no section "nope" in the file`},
		{name: "forget for no one", cli: []string{"forget", "nobody", "--heading", "nope"}, method: http.MethodPost, path: "/api/v1/agents/nobody/forget", body: `{"heading": "nope"}`,
			tool: mcpserver.ToolForget, args: map[string]any{"agent": "nobody", "heading": "nope"},
			status: 404, want: "forget: agent nobody has no memory file"},
	} {
		t.Run(r.name, func(t *testing.T) {
			s.t = t
			s.refused(r)
		})
	}
	// Empty dates are no dates, on all three.
	s.t = t
	want := object(t, s.cli("search", "--json", "login"), "took_ms")
	sameObject(t, "search with empty dates", map[string]map[string]any{
		"cli":       want,
		"cli empty": object(t, s.cli("search", "--json", "login", "--as-of", "", "--since", "", "--until", ""), "took_ms"),
		"api":       object(t, s.get("/api/v1/search?q=login&as_of=&since=&until="), "took_ms", "view"),
		"mcp":       object(t, s.tool(mcpserver.ToolSearch, map[string]any{"query": "login", "as_of": "", "since": "", "until": ""}), "took_ms"),
	})
}

// TestEverySurfaceKeepsSecretsOutOfTheHome: remember through the CLI,
// the HTTP API and MCP, pin through each, import and the capture hook:
// each says how many secrets it redacted, and afterwards no secret is in
// any byte of the home (memory and session files, the index and its WAL,
// the event log) while every lookalike is kept.
func TestEverySurfaceKeepsSecretsOutOfTheHome(t *testing.T) {
	g := redacttest.New(2029)
	s := newSurfaces(t, map[string]string{"alice": "# Memory\n"})
	var all []redacttest.Secret
	var looks []redacttest.Lookalike
	note := func() string {
		ss, ls := g.Secrets(len(redacttest.Kinds())), g.Lookalikes(len(redacttest.LookalikeKinds()))
		all, looks = append(all, ss...), append(looks, ls...)
		return redacttest.Note(ss, ls)
	}
	fact := func(kind string) string {
		sec := g.Secret(kind)
		all = append(all, sec)
		return "deploys use " + sec.Value
	}
	says := func(surface, out string) {
		t.Helper()
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s does not say what it redacted: %s", surface, out)
		}
	}
	// The CLI: remember reads the note from stdin; the count is on stderr.
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"--home", s.root, "remember", "alice", "-", "--heading", "cli note"}, strings.NewReader(note()), &out, &errOut); code != 0 {
		t.Fatalf("remember: %s", errOut.String())
	}
	says("cli remember", errOut.String())
	says("cli pin --json", s.cli("pin", "alice", fact("gitlab-token"), "--json"))
	// The HTTP API and MCP.
	body, _ := json.Marshal(map[string]any{"text": note(), "heading": "api note"})
	says("api remember", s.post("/api/v1/agents/alice/remember", string(body)))
	body, _ = json.Marshal(map[string]any{"fact": fact("slack-bot-token")})
	says("api pin", s.post("/api/v1/agents/alice/pin", string(body)))
	says("mcp remember", s.tool("memory_remember", map[string]any{"agent": "alice", "text": note(), "heading": "mcp note"}))
	says("mcp pin", s.tool("memory_pin", map[string]any{"agent": "alice", "fact": fact("sendgrid-api-key")}))
	// import, and the capture hook, of two Claude Code transcripts.
	dir := t.TempDir()
	for i, args := range [][]string{{"import", "claude-code", "--agent", "alice"}, {"hook", "save", "--agent", "alice"}} {
		ss, ls := g.Secrets(len(redacttest.Kinds())), g.Lookalikes(len(redacttest.LookalikeKinds()))
		all, looks = append(all, ss...), append(looks, ls...)
		src := filepath.Join(dir, fmt.Sprintf("session-%d.jsonl", i))
		if err := os.WriteFile(src, g.Transcript(ss, ls), 0o644); err != nil {
			t.Fatal(err)
		}
		stdin := ""
		if args[0] == "hook" {
			in, _ := json.Marshal(map[string]string{"session_id": "s", "transcript_path": src, "hook_event_name": "SessionEnd"})
			stdin = string(in)
		} else {
			args = append(args, src)
		}
		out.Reset()
		errOut.Reset()
		if code := Main(context.Background(), append([]string{"--home", s.root}, args...), strings.NewReader(stdin), &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		says(args[0], errOut.String())
	}
	var needles []string
	for _, sec := range all {
		needles = append(needles, sec.Needles()...)
	}
	hometest.AssertNoneInHome(t, s.root, needles...)
	var hive strings.Builder
	_ = filepath.WalkDir(filepath.Join(s.root, "hive", "agents"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			hive.Write(b)
		}
		return nil
	})
	for _, l := range looks {
		if !strings.Contains(hive.String(), l.Value) {
			t.Errorf("lookalike %s %q is missing", l.Kind, l.Value)
		}
	}
}
