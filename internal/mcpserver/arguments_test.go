package mcpserver_test

// Every tool driven with hostile and malformed arguments
// through a real client over the SDK's in-memory transport. A refusal must
// be a tool error (isError) whose text names the problem; nothing may be a
// protocol error, a panic, a hang, or a silent success on wrong input.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

// badAgentIDs are agent ids that must never name a file.
var badAgentIDs = []string{
	".", "..", "../x", "a/b", `a\b`, "CON", "Alice", "a\x00b", strings.Repeat("a", 65),
	"аlice", "ａｌｉｃｅ", "alice ", " alice", "-x", "_x", "x..y", "\xff",
}

// TestToolsRefuseBadAgentIDs: every tool that takes an agent refuses each bad
// id with "invalid agent id" (or, for the bound agent's writes, by the
// binding), and never touches the file system.
func TestToolsRefuseBadAgentIDs(t *testing.T) {
	a := newHome(t, testFiles, true)
	unbound := connect(t, mcpserver.Deps{App: a})
	for _, id := range badAgentIDs {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{mcpserver.ToolRemember, map[string]any{"text": "x", "agent": id}},
			{mcpserver.ToolPin, map[string]any{"fact": "x", "agent": id}},
			{mcpserver.ToolRead, map[string]any{"agent": id}},
			{mcpserver.ToolCondense, map[string]any{"agent": id}},
			{mcpserver.ToolCondense, map[string]any{"agent": id, "dry_run": true}},
			{mcpserver.ToolSearch, map[string]any{"query": "login", "agent": id}},
		} {
			t.Run(fmt.Sprintf("%s %q", c.tool, id), func(t *testing.T) {
				res := call(t, unbound, c.tool, c.args)
				if !res.IsError {
					t.Fatalf("succeeded: %s", text(res))
				}
				// A lone \xff arrives as U+FFFD: still an invalid id.
				if got := text(res); !strings.Contains(got, "invalid agent id") {
					t.Fatalf("error %q does not say invalid agent id", got)
				}
			})
		}
	}
	ents, _ := os.ReadDir(a.Home().AgentsDir())
	if len(ents) != 2 {
		t.Errorf("agents dir now holds %d entries", len(ents))
	}
	// A valid id with no file: reads and condensations say so.
	fails(t, unbound, mcpserver.ToolRead, map[string]any{"agent": "nobody"}, "no memory file")
	fails(t, unbound, mcpserver.ToolCondense, map[string]any{"agent": "nobody", "dry_run": true}, "no memory file")
	fails(t, unbound, mcpserver.ToolWakeUp, map[string]any{"wing": "nobody"}, "unknown wing")
	// A wing that is no agent id (and no mined file's): the id is what is
	// wrong, as for every other tool, not an unknown wing.
	for _, id := range badAgentIDs {
		if !strings.ContainsRune(id, 0) { // a NUL is refused as such, before any lookup
			fails(t, unbound, mcpserver.ToolWakeUp, map[string]any{"wing": id}, "invalid agent id")
		}
	}
	fails(t, unbound, mcpserver.ToolWakeUp, map[string]any{"wing": "Bad..Id"}, `invalid agent id "Bad..Id"`)
}

// TestSearchSinceAfterUntil: a date range whose start is after its
// end can match nothing. The HTTP API refuses it ("since ... is after
// until ..."); memory_search answers an empty success, so an agent that
// swapped the two dates learns nothing about its mistake.
func TestSearchSinceAfterUntil(t *testing.T) {
	cs := connect(t, mcpserver.Deps{App: newHome(t, testFiles, true)})
	// The range holds matching sections when the right way round.
	in := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "since": "2026-11-01", "until": "2026-11-30"})
	if len(in.Hits) == 0 {
		t.Fatal("no hits in the forward range")
	}
	res := call(t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", "since": "2026-11-30", "until": "2026-11-01"})
	if !res.IsError {
		t.Fatalf("since 2026-11-30 after until 2026-11-01 succeeded with an empty result (%s); want a tool error naming since/until", text(res))
	}
	if got := text(res); !strings.Contains(got, "since") {
		t.Fatalf("error %q does not name since", got)
	}
}

// TestEmptyOptionalArgumentsAreAbsent: an optional string argument sent
// empty, as clients often send one they have no value for, means what
// leaving it out means, as the HTTP API and the CLI take an empty value:
// as_of today, since and until no bound, region the whole file.
func TestEmptyOptionalArgumentsAreAbsent(t *testing.T) {
	cs := connect(t, mcpserver.Deps{App: newHome(t, testFiles, true), Agent: "alice"})
	want := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login"})
	for _, k := range []string{"as_of", "since", "until", "wing", "room", "agent", "mode"} {
		t.Run(k, func(t *testing.T) {
			got := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "login", k: ""})
			if len(got.Hits) == 0 || len(got.Hits) != len(want.Hits) || got.Hits[0].ID != want.Hits[0].ID {
				t.Errorf("%s \"\": hits %+v, want those of no %s: %+v", k, got.Hits, k, want.Hits)
			}
		})
	}
	whole := ok[mcpserver.ReadOutput](t, cs, mcpserver.ToolRead, map[string]any{})
	for _, args := range []map[string]any{{"region": ""}, {"section": ""}, {"agent": ""}} {
		if got := ok[mcpserver.ReadOutput](t, cs, mcpserver.ToolRead, args); got.Text != whole.Text || got.Region != mcpserver.RegionAll {
			t.Errorf("read %v: region %q, %d bytes; want the whole file", args, got.Region, len(got.Text))
		}
	}
	digest := ok[app.WakeUpResult](t, cs, mcpserver.ToolWakeUp, map[string]any{"wing": ""})
	if digest.Wing != "alice" {
		t.Errorf("wake-up wing \"\": digest of %q, want the bound agent's", digest.Wing)
	}
}

// TestSearchQuerySyntaxIsWords: FTS5 operators, quotes and SQL are searched
// as words: a result, never a tool error from the query language. A query
// with no word at all can never match in the lexical-only palace: a tool
// error that says so, not an empty result.
func TestSearchQuerySyntaxIsWords(t *testing.T) {
	cs := connect(t, mcpserver.Deps{App: newHome(t, testFiles, true)})
	for _, q := range []string{
		`"unbalanced login`, `login*`, `* login`, `NEAR(login flaky)`, `NEAR`, `login NEAR/3 test`, `(login`, `login)`,
		`login AND`, `OR login`, `NOT`, `-login`, `heading:login`, `{text}: login`, `^login`, `'; DROP TABLE drawers; --`,
		`the of and`, `... login`, `日本語`, "login\u200btest", "login\x00test", strings.Repeat("login ", 600),
	} {
		t.Run(q[:min(len(q), 30)], func(t *testing.T) {
			out := ok[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": q})
			if out.Mode != "lexical" || out.Hits == nil {
				t.Fatalf("out = %+v", out)
			}
		})
	}
	for _, q := range []string{`*`, `...`, `()`, `🎉`} {
		t.Run("no words "+q, func(t *testing.T) {
			fails(t, cs, mcpserver.ToolSearch, map[string]any{"query": q}, "no words to search for")
		})
	}
}

// TestRememberAndPinRefuseMalformed: malformed notes and facts.
func TestRememberAndPinRefuseMalformed(t *testing.T) {
	a := newHome(t, testFiles, true)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	before := apptest.ReadMemory(t, a, "alice")
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"text empty", mcpserver.ToolRemember, map[string]any{"text": ""}, "text"},
		{"text blank", mcpserver.ToolRemember, map[string]any{"text": " \n\t "}, "empty"},
		{"text NUL", mcpserver.ToolRemember, map[string]any{"text": "a\x00b"}, "NUL"},
		{"text over 64 KiB", mcpserver.ToolRemember, map[string]any{"text": strings.Repeat("x", 64<<10+1)}, "text"},
		{"text number", mcpserver.ToolRemember, map[string]any{"text": 42}, "text"},
		{"heading two lines", mcpserver.ToolRemember, map[string]any{"text": "x", "heading": "a\nb"}, "one line"},
		{"heading CR", mcpserver.ToolRemember, map[string]any{"text": "x", "heading": "a\rb"}, "one line"},
		{"heading NUL", mcpserver.ToolRemember, map[string]any{"text": "x", "heading": "a\x00"}, "NUL"},
		{"heading long", mcpserver.ToolRemember, map[string]any{"text": "x", "heading": strings.Repeat("h", 201)}, "heading"},
		{"unknown argument", mcpserver.ToolRemember, map[string]any{"text": "x", "title": "t"}, "title"},
		{"fact empty", mcpserver.ToolPin, map[string]any{"fact": ""}, "fact"},
		{"fact dash", mcpserver.ToolPin, map[string]any{"fact": "-"}, "not a fact"},
		{"fact placeholder", mcpserver.ToolPin, map[string]any{"fact": "_(none yet)_"}, "placeholder"},
		{"fact pin only", mcpserver.ToolPin, map[string]any{"fact": "📌"}, "not a fact"},
		{"fact CRLF", mcpserver.ToolPin, map[string]any{"fact": "a\r\nb"}, "one line"},
		{"fact NUL", mcpserver.ToolPin, map[string]any{"fact": "a\x00b"}, "NUL"},
	} {
		t.Run(c.name, func(t *testing.T) { fails(t, cs, c.tool, c.args, c.want) })
	}
	if after := apptest.ReadMemory(t, a, "alice"); after != before {
		t.Fatalf("a refused write changed the file:\n%s", after)
	}
	// Text that looks like structure stays data.
	out := ok[mcpserver.RememberOutput](t, cs, mcpserver.ToolRemember, map[string]any{
		"text": "## Recent\n## 📌 Durable facts (pinned — never condensed)\n```\nopen fence", "heading": "structure"})
	if out.Section.Heading != "2026-11-29 — structure" {
		t.Fatalf("section = %+v", out.Section)
	}
	r := ok[mcpserver.ReadOutput](t, cs, mcpserver.ToolRead, map[string]any{"region": "pinned"})
	if len(r.Facts) != 1 {
		t.Fatalf("a remembered note changed the pinned region: %+v", r.Facts)
	}
}

// TestRememberBlankHeading: a heading of only spaces is neither
// refused nor replaced by the note's first line (as an absent heading is):
// the section is written as "## <date> —    " with trailing blanks and no
// title.
func TestRememberBlankHeading(t *testing.T) {
	a := newHome(t, testFiles, true)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	res := call(t, cs, mcpserver.ToolRemember, map[string]any{"text": "the cache key includes the locale", "heading": "   "})
	if res.IsError {
		if !strings.Contains(text(res), "heading") {
			t.Fatalf("error %q does not name the heading", text(res))
		}
		return
	}
	f := apptest.ReadMemory(t, a, "alice")
	if strings.Contains(f, "## 2026-11-29 —    \n") || !strings.Contains(f, "## 2026-11-29 — the cache key includes the locale\n") {
		t.Fatalf("blank heading accepted as is: the section heading is %q; want a tool error or the note's first line",
			f[strings.LastIndex(f, "## 2026-11-29"):strings.LastIndex(f, "\nthe cache key")])
	}
}

// TestBrokenMemoryFilesAreToolErrors: tools over memory files that are invalid
// UTF-8, binary, empty or not files: a tool error naming the problem, or
// a sane result, never a protocol error or a panic.
func TestBrokenMemoryFilesAreToolErrors(t *testing.T) {
	a := newHome(t, testFiles, true)
	hometest.WriteMemory(t, a.Home(), "badutf8", "# M\n\n## 2026-11-01 — caf\xe9\nbody\n")
	hometest.WriteMemory(t, a.Home(), "binary", "\x00\x01\x02 binary\n")
	hometest.WriteMemory(t, a.Home(), "empty", "")
	if err := os.MkdirAll(filepath.Join(a.Home().AgentsDir(), "dirfile", "memory.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.Deps{App: a})
	for _, id := range []string{"badutf8", "binary"} {
		fails(t, cs, mcpserver.ToolRead, map[string]any{"agent": id}, id)
		fails(t, cs, mcpserver.ToolWakeUp, map[string]any{"wing": id}, id)
		fails(t, cs, mcpserver.ToolRemember, map[string]any{"agent": id, "text": "x"}, "")
		fails(t, cs, mcpserver.ToolPin, map[string]any{"agent": id, "fact": "x"}, "")
	}
	fails(t, cs, mcpserver.ToolRead, map[string]any{"agent": "dirfile"}, "dirfile")
	fails(t, cs, mcpserver.ToolRemember, map[string]any{"agent": "dirfile", "text": "x"}, "")
	r := ok[mcpserver.ReadOutput](t, cs, mcpserver.ToolRead, map[string]any{"agent": "empty"})
	if r.Bytes != 0 || r.Text != "" {
		t.Fatalf("empty read = %+v", r)
	}
	fails(t, cs, mcpserver.ToolRead, map[string]any{"agent": "empty", "section": "1"}, "outside the file")
	st := call(t, cs, mcpserver.ToolStatus, nil)
	if st.IsError {
		t.Fatalf("status with broken files: %s", text(st))
	}
	ok[map[string]any](t, cs, mcpserver.ToolWakeUp, map[string]any{"hive": true})
	// Condensing them: refused or skipped with a reason, never written.
	for _, id := range []string{"badutf8", "binary", "empty"} {
		before := apptest.ReadMemory(t, a, id)
		res := call(t, cs, mcpserver.ToolCondense, map[string]any{"agent": id, "force": true})
		if !res.IsError && !strings.Contains(fmt.Sprint(res.StructuredContent), "skipped") {
			t.Errorf("condense %s: %s", id, text(res))
		}
		if apptest.ReadMemory(t, a, id) != before {
			t.Errorf("condense %s changed the file", id)
		}
	}
}

// TestConcurrentWritesLandOnce: many clients remember and pin into one file
// at once; every note and fact lands exactly once.
func TestConcurrentWritesLandOnce(t *testing.T) {
	a := newHome(t, testFiles, true)
	const n = 12
	sessions := make([]*mcp.ClientSession, 4)
	for i := range sessions {
		sessions[i] = connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		cs := sessions[i%len(sessions)]
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolRemember,
				Arguments: map[string]any{"text": fmt.Sprintf("concurrent note %d", i), "heading": fmt.Sprintf("note %d", i)}})
			if err != nil || res.IsError {
				errs <- fmt.Sprintf("remember %d: %v %v", i, err, res)
			}
		}()
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolPin,
				Arguments: map[string]any{"fact": fmt.Sprintf("concurrent fact %d", i)}})
			if err != nil || res.IsError {
				errs <- fmt.Sprintf("pin %d: %v %v", i, err, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	f := apptest.ReadMemory(t, a, "alice")
	for i := 0; i < n; i++ {
		if c := strings.Count(f, fmt.Sprintf("concurrent note %d\n", i)); c != 1 {
			t.Errorf("note %d appears %d times", i, c)
		}
		if c := strings.Count(f, fmt.Sprintf("- concurrent fact %d\n", i)); c != 1 {
			t.Errorf("fact %d appears %d times", i, c)
		}
	}
	out := ok[mcpserver.SearchOutput](t, sessions[0], mcpserver.ToolSearch, map[string]any{"query": "concurrent note", "results": 100})
	if len(out.Hits) < n {
		t.Errorf("%d hits for the concurrent notes, want %d", len(out.Hits), n)
	}
}

// TestBrokenModelSearchNamesModel: search with an unusable model is a tool
// error that names the model, not a protocol error or an empty result.
func TestBrokenModelSearchNamesModel(t *testing.T) {
	a := apptest.BrokenModelApp(t)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	fails(t, cs, mcpserver.ToolSearch, map[string]any{"query": "login"}, "model")
}

// TestRememberWithBrokenEmbedder: when the note is written but cannot
// be indexed (the model does not load), memory_remember reports a plain
// failure. The note is already in the file, and the error does not say so:
// an agent that retries, as it should after a failed write, records the
// note twice.
func TestRememberWithBrokenEmbedder(t *testing.T) {
	a := apptest.BrokenModelApp(t)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	note := "the build cache lives on the second disk"
	res := call(t, cs, mcpserver.ToolRemember, map[string]any{"text": note, "heading": "cache"})
	if !res.IsError {
		return // the embedder failure did not surface: nothing to retry
	}
	saved := strings.Count(apptest.ReadMemory(t, a, "alice"), note)
	msg := text(res)
	t.Logf("error: %s", msg)
	if saved > 0 && !strings.Contains(strings.ToLower(msg), "saved") && !strings.Contains(strings.ToLower(msg), "written") &&
		!strings.Contains(strings.ToLower(msg), "recorded") {
		// Retry, as a client does after an error.
		call(t, cs, mcpserver.ToolRemember, map[string]any{"text": note, "heading": "cache"})
		t.Fatalf("memory_remember failed with %q although the note was written to the file (%d copy); "+
			"after one retry the file holds it %d times", msg, saved, strings.Count(apptest.ReadMemory(t, a, "alice"), note))
	}
}

// TestUnreachableSummarizerLeavesFile: a condensation whose LLM cannot be
// reached is refused with a message naming the summarizer, and the file
// is left alone.
func TestUnreachableSummarizerLeavesFile(t *testing.T) {
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n[summarizer]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\ntimeout = \"2s\"\n"+
		"[reflector]\nmin_bytes = 0\nrecent_keep = 1\n")
	hometest.WriteMemory(t, a.Home(), "alice", testFiles["alice"])
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, cs, mcpserver.ToolCondense, map[string]any{"force": true}) }()
	select {
	case res := <-done:
		t.Logf("condense with an unreachable LLM: %s", text(res))
		if !res.IsError {
			t.Fatalf("condense with an unreachable LLM succeeded: %s", text(res))
		}
		if got := text(res); !strings.Contains(got, "openai") && !strings.Contains(got, "summar") {
			t.Fatalf("error %q does not name the summarizer", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("condense with an unreachable LLM hangs")
	}
	if apptest.ReadMemory(t, a, "alice") != testFiles["alice"] {
		t.Fatal("a failed condensation changed the file")
	}
}

// TestOutOfRangeArgumentsGetTheAppsMessage: a text too long or a number
// too large is refused by the app's own check, with the message the CLI
// and the HTTP API give for it, not by the input schema with the
// validator's (`validating "arguments": ... maxLength: "aaaa…"`, which
// repeated the whole argument, or `maximum: 101/1 is greater than
// 100.000000`).
func TestOutOfRangeArgumentsGetTheAppsMessage(t *testing.T) {
	a := newHome(t, testFiles, true)
	cs := connect(t, mcpserver.Deps{App: a, Agent: "alice"})
	ctx := t.Context()
	appErr := func(err error) string {
		t.Helper()
		if err == nil {
			t.Fatal("the app took the request")
		}
		return err.Error()
	}
	_, searchLong := a.Search(ctx, app.SearchRequest{Query: strings.Repeat("a", 5000)})
	_, wingLong := a.Search(ctx, app.SearchRequest{Query: "x", Wing: strings.Repeat("w", 300)})
	_, roomLong := a.Search(ctx, app.SearchRequest{Query: "x", Room: strings.Repeat("r", 300)})
	_, tooMany := a.Search(ctx, app.SearchRequest{Query: "x", Results: 101, MaxResults: mcpserver.MaxResults})
	_, budget := a.WakeUp(ctx, app.WakeUpRequest{Budget: mcpserver.MaxWakeUpBudget + 1, MaxBudget: mcpserver.MaxWakeUpBudget})
	_, zeroResults := a.Search(ctx, app.SearchRequest{Query: "x", ResultsGiven: true, MaxResults: mcpserver.MaxResults})
	_, zeroBudget := a.WakeUp(ctx, app.WakeUpRequest{BudgetGiven: true, MaxBudget: mcpserver.MaxWakeUpBudget})
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"query too long", mcpserver.ToolSearch, map[string]any{"query": strings.Repeat("a", 5000)}, appErr(searchLong)},
		{"wing too long", mcpserver.ToolSearch, map[string]any{"query": "x", "wing": strings.Repeat("w", 300)}, appErr(wingLong)},
		{"room too long", mcpserver.ToolSearch, map[string]any{"query": "x", "room": strings.Repeat("r", 300)}, appErr(roomLong)},
		{"results over the cap", mcpserver.ToolSearch, map[string]any{"query": "x", "results": 101}, appErr(tooMany)},
		{"budget over the cap", mcpserver.ToolWakeUp, map[string]any{"budget": mcpserver.MaxWakeUpBudget + 1}, appErr(budget)},
		{"text too long", mcpserver.ToolRemember, map[string]any{"text": strings.Repeat("x", 64<<10+1)}, "text is 65537 bytes"},
		{"heading too long", mcpserver.ToolRemember, map[string]any{"text": "x", "heading": strings.Repeat("h", 201)}, "heading is 201 bytes"},
		{"fact too long", mcpserver.ToolPin, map[string]any{"fact": strings.Repeat("f", 2001)}, "fact is 2001 bytes"},
		{"forget heading too long", mcpserver.ToolForget, map[string]any{"heading": strings.Repeat("h", 401)}, "heading is 401 bytes"},
		{"events over the cap", mcpserver.ToolEvents, map[string]any{"n": mcpserver.MaxEvents + 1}, "n 501: want a number of events from 1 to 500"},
		// A 0 given is refused, as in the CLI and the API, by the app.
		{"results 0", mcpserver.ToolSearch, map[string]any{"query": "x", "results": 0}, appErr(zeroResults)},
		{"results -3", mcpserver.ToolSearch, map[string]any{"query": "x", "results": -3}, "results must be between 1 and 100, got -3"},
		{"budget 0", mcpserver.ToolWakeUp, map[string]any{"budget": 0}, appErr(zeroBudget)},
		{"budget -1", mcpserver.ToolWakeUp, map[string]any{"budget": -1}, "budget must be between 1 and 20000 tokens, got -1"},
		{"events 0", mcpserver.ToolEvents, map[string]any{"n": 0}, "n 0: want a number of events from 1 to 500"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fails(t, cs, c.tool, c.args, c.want)
			if got := text(call(t, cs, c.tool, c.args)); strings.Contains(got, "validating") || len(got) > 300 {
				t.Errorf("error %.200q… (%d bytes) is the schema validator's, or repeats the argument", got, len(got))
			}
		})
	}
}
