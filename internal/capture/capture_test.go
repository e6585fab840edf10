package capture

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden session files in testdata/")

// fixedNow dates turns without a time in the goldens.
var fixedNow = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// fixtures are the hand-written sources in testdata/, one or more per
// format, with the format Detect must find.
var fixtures = []struct{ file, format string }{
	{"claude-code.jsonl", "claude-code"},
	{"codex.jsonl", "codex"},
	{"chatgpt.json", "chatgpt"},
	{"claude-ai.json", "claude-ai"},
	{"generic.jsonl", "generic"},
	{"generic.json", "generic"},
	{"transcript.md", "markdown"},
}

// newPalace is a real palace (SQLite, lexical-only) over a fresh home.
func newPalace(t testing.TB) (home.Home, *palace.Palace) {
	t.Helper()
	h := hometest.New(t)
	p, _ := hometest.Palace(t, h, nil, palace.Options{})
	return h, p
}

// fixture copies a fixture into a temp dir with a fixed mtime (the date of
// turns without a time) and returns its path.
func fixture(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return writeSource(t, file, data)
}

func writeSource(t *testing.T, file string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fixedNow, fixedNow); err != nil {
		t.Fatal(err)
	}
	return p
}

// sessionFiles concatenates an agent's session files, each under its name.
func sessionFiles(t *testing.T, h home.Home, agent string) string {
	t.Helper()
	dir, _ := h.SessionsDir(agent)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("=== " + n + " ===\n")
		b.Write(data)
	}
	return b.String()
}

func TestImportMatchesGoldenAndIsIdempotent(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			h, p := newPalace(t)
			src := fixture(t, fx.file)
			opts := Options{Agent: "alice", Format: fx.format, Now: fixedNow}
			res, err := Import(context.Background(), h, p, []string{src}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.MineErr != nil {
				t.Fatal(res.MineErr)
			}
			if res.TurnsAdded == 0 {
				t.Fatal("no turns imported")
			}
			// An agent with sessions has a memory file: it is an agent everywhere.
			mem, _ := h.MemoryPath("alice")
			if data, err := os.ReadFile(mem); err != nil || !bytes.Equal(data, memfile.Template("alice", "alice")) {
				t.Errorf("memory file: %q, %v; want the template", data, err)
			}
			got := sessionFiles(t, h, "alice")
			golden := filepath.Join("testdata", fx.file+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("session files differ from %s (go test -update rewrites it):\n%s", golden, got)
			}

			// The same conversation again changes nothing, detected or named.
			opts.Format = "auto"
			res, err = Import(context.Background(), h, p, []string{src}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.TurnsAdded != 0 {
				t.Errorf("second import added %d turns", res.TurnsAdded)
			}
			if again := sessionFiles(t, h, "alice"); again != got {
				t.Errorf("second import changed the files:\n%s", again)
			}
		})
	}
}

func TestDetectRecognisesEveryFixture(t *testing.T) {
	for _, fx := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(fx.file, data); got != fx.format {
			t.Errorf("Detect(%s) = %q, want %q", fx.file, got, fx.format)
		}
	}
	// A Claude Code transcript that opens with bookkeeping lines.
	late := `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}` + "\n" +
		`{"type":"queue-operation","operation":"enqueue"}` + "\n" +
		`{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}` + "\n"
	if got := Detect("s.jsonl", []byte(late)); got != "claude-code" {
		t.Errorf("Detect(transcript opening with snapshots) = %q, want claude-code", got)
	}
	for _, s := range []string{"", "hello", "# notes\n\nsome text", `{"a": 1}`, `[1, 2]`, "[]"} {
		if got := Detect("x.md", []byte(s)); got != "" {
			t.Errorf("Detect(%q) = %q, want none", s, got)
		}
	}
}

// TestGrownTranscriptAppendsOnlyNewTurns imports a Claude Code transcript
// cut mid-exchange, then the whole of it: the second import appends only
// the turns after the cut, and the file holds every turn once.
func TestGrownTranscriptAppendsOnlyNewTurns(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "claude-code.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	for _, cut := range []int{1, 5, 6, 9} {
		h, p := newPalace(t)
		src := writeSource(t, "s.jsonl", []byte(strings.Join(lines[:cut], "")))
		opts := Options{Agent: "bob", Format: "claude-code", Now: fixedNow}
		first, err := Import(context.Background(), h, p, []string{src}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, full, 0o644); err != nil {
			t.Fatal(err)
		}
		second, err := Import(context.Background(), h, p, []string{src}, opts)
		if err != nil {
			t.Fatal(err)
		}
		convs, err := Parse("claude-code", src, full)
		if err != nil {
			t.Fatal(err)
		}
		total := len(convs[0].Turns)
		if first.TurnsAdded+second.TurnsAdded != total {
			t.Errorf("cut %d: %d + %d turns imported, want %d in all", cut, first.TurnsAdded, second.TurnsAdded, total)
		}
		text := sessionFiles(t, h, "bob")
		if strings.Count(text, "=== ") != 1 {
			t.Errorf("cut %d: want one session file, got:\n%s", cut, text)
		}
		for _, want := range []string{"- **user**: The login test fails", "**tool error**: --- FAIL: TestLogin", "- **user**: Thanks. Remember", "- **assistant**: Noted."} {
			if n := strings.Count(text, want); n != 1 {
				t.Errorf("cut %d: %q appears %d times, want once:\n%s", cut, want, n, text)
			}
		}
		third, err := Import(context.Background(), h, p, []string{src}, opts)
		if err != nil || third.TurnsAdded != 0 {
			t.Errorf("cut %d: third import: %d turns, %v", cut, third.TurnsAdded, err)
		}
	}
}

// TestLiveTranscriptTakesEveryCompleteLine: a JSON lines source read while
// it is written ends in a line cut short (no line break, half an object).
// The import takes every complete line and leaves the cut one; the next
// import, of the finished file, adds the rest, each turn once.
func TestLiveTranscriptTakesEveryCompleteLine(t *testing.T) {
	for _, fx := range []struct{ file, format string }{
		{"claude-code.jsonl", "claude-code"},
		{"codex.jsonl", "codex"},
		{"generic.jsonl", "generic"},
	} {
		full, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		convs, err := Parse(fx.format, fx.file, full)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, c := range convs {
			total += len(c.Turns)
		}
		lines := strings.SplitAfter(string(full), "\n")
		for k, line := range lines {
			if len(strings.TrimSpace(line)) < 2 {
				continue
			}
			done := strings.Join(lines[:k], "")
			// Cut after the brace, in the middle or before the last
			// brace, in turn from line to line.
			cut := []int{1, len(line) / 2, len(strings.TrimRight(line, "\n")) - 1}[k%3]
			name := fmt.Sprintf("%s line %d cut at %d", fx.format, k+1, cut)
			h, p := newPalace(t)
			src := writeSource(t, "live.jsonl", []byte(done+line[:cut]))
			opts := Options{Agent: "dana", Format: fx.format, Now: fixedNow}
			first, err := Import(context.Background(), h, p, []string{src}, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := 0
			if before, err := Parse(fx.format, fx.file, []byte(done)); err == nil {
				for _, c := range before {
					want += len(c.Turns)
				}
			}
			if first.TurnsAdded != want {
				t.Errorf("%s: %d turns imported, want the %d of the complete lines", name, first.TurnsAdded, want)
			}
			if err := os.WriteFile(src, full, 0o644); err != nil {
				t.Fatal(err)
			}
			second, err := Import(context.Background(), h, p, []string{src}, opts)
			if err != nil {
				t.Fatalf("%s: finished file: %v", name, err)
			}
			if first.TurnsAdded+second.TurnsAdded != total {
				t.Errorf("%s: %d + %d turns imported, want %d in all", name, first.TurnsAdded, second.TurnsAdded, total)
			}
			third, err := Import(context.Background(), h, p, []string{src}, opts)
			if err != nil || third.TurnsAdded != 0 {
				t.Errorf("%s: third import: %d turns, %v", name, third.TurnsAdded, err)
			}
		}
	}
	// A cut line in the middle is no line being written: still an error
	// naming file and line.
	h, p := newPalace(t)
	src := writeSource(t, "mid.jsonl", []byte("{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"type\":\"assis\n{\"type\":\"user\",\"uuid\":\"u2\",\"message\":{\"role\":\"user\",\"content\":\"there\"}}\n"))
	_, err := Import(context.Background(), h, p, []string{src}, Options{Agent: "dana", Format: "claude-code"})
	if err == nil || !strings.Contains(err.Error(), "mid.jsonl:2: not a JSON object") {
		t.Errorf("a cut line in the middle: error %v, want mid.jsonl:2", err)
	}
}

func TestMalformedInputNamesFileAndLineAndWritesNothing(t *testing.T) {
	goodFor := map[string]string{"auto": "claude-code.jsonl"}
	for _, fx := range fixtures {
		if goodFor[fx.format] == "" {
			goodFor[fx.format] = fx.file
		}
	}
	cases := []struct {
		name, format, file, data, want string
	}{
		{"bad json line", "claude-code", "bad.jsonl", "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"1\"}\n\n{\"type\": oops}\n", "bad.jsonl:3: not a JSON object"},
		{"user line without message", "claude-code", "nomsg.jsonl", "{\"type\":\"user\",\"uuid\":\"1\"}\n", "nomsg.jsonl:1: user line without a message"},
		{"content of the wrong type", "claude-code", "num.jsonl", "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":42}}\n", "num.jsonl:1: content is neither"},
		{"codex payload", "codex", "rollout.jsonl", "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n{\"type\":\"response_item\",\"payload\":[1]}\n", "rollout.jsonl:2: response_item"},
		{"chatgpt syntax", "chatgpt", "conversations.json", "[\n  {\"mapping\": {}, \"title\": \"a\", \"conversation_id\": \"x\"},\n  {\"mapping\": \n", "conversations.json:3: invalid JSON"},
		{"chatgpt no mapping", "chatgpt", "c.json", "[\n{\"title\": \"a\"},\n{\"title\": \"b\"}\n]", "c.json:2: not a ChatGPT conversation: no mapping"},
		{"chatgpt cycle", "chatgpt", "cy.json", `[{"conversation_id":"x","current_node":"a","mapping":{"a":{"parent":"b"},"b":{"parent":"a"}}}]`, "cy.json:1: conversation \"x\": the message tree has a cycle"},
		{"claude-ai sender", "claude-ai", "ca.json", `[{"uuid":"u","chat_messages":[{"sender":"robot","text":"x"}]}]`, `ca.json:1: conversation u, message 1: unknown sender "robot"`},
		{"generic role", "generic", "g.jsonl", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"narrator\",\"content\":\"b\"}\n", `g.jsonl:2: unknown role "narrator"`},
		{"generic timestamp", "generic", "g2.jsonl", "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":\"yesterday\"}\n", "g2.jsonl:1: timestamp \"yesterday\""},
		{"generic list", "generic", "g.json", "[{\"role\": \"user\"}]", "g.json:1: message without content"},
		{"transcript", "markdown", "notes.md", "just some notes\n", "notes.md: no turns found"},
		{"unknown format", "auto", "what.txt", "hello there\n", "what.txt: not a conversation format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, p := newPalace(t)
			good := fixture(t, goodFor[c.format])
			bad := writeSource(t, c.file, []byte(c.data))
			// The good file first: it must not be written either.
			_, err := Import(context.Background(), h, p, []string{good, bad}, Options{Agent: "carol", Format: c.format})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if got := sessionFiles(t, h, "carol"); got != "" {
				t.Errorf("files written despite the error:\n%s", got)
			}
		})
	}
}

func TestSessionsAreMinedIntoRoomSession(t *testing.T) {
	h, p := newPalace(t)
	if _, err := memory.Remember(context.Background(), h, "alice", "", "Tokens live five minutes.", fixedNow); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(context.Background(), h, p, []string{fixture(t, "codex.jsonl")}, Options{Agent: "alice", Format: "codex"}); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(context.Background(), palace.Query{Text: "readiness pool warm", Filter: store.Filter{Room: "session"}, Mode: "lexical"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 {
		t.Fatal("no session hit")
	}
	for _, hit := range hits {
		if hit.Room != "session" || hit.Agent != "alice" || hit.Wing != "alice" || !strings.Contains(hit.Source, "/sessions/") {
			t.Errorf("hit %+v: want room session, agent and wing alice, a session file", hit)
		}
		if strings.Contains(hit.Text, "hivemem:") {
			t.Errorf("hit text carries the bookkeeping comment: %q", hit.Text)
		}
	}
	// The index is disposable: rebuilt from the markdown, sessions are
	// back in their room.
	if _, err := p.Reindex(context.Background(), palace.ReindexOptions{}); err != nil {
		t.Fatal(err)
	}
	hits, err = p.Search(context.Background(), palace.Query{Text: "readiness pool warm", Filter: store.Filter{Room: "session", Agent: "alice"}, Mode: "lexical"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("after reindex: %d hits, %v", len(hits), err)
	}
	// The memory file is not in the session room.
	hits, err = p.Search(context.Background(), palace.Query{Text: "tokens five minutes", Filter: store.Filter{Room: "session"}, Mode: "lexical"})
	if err != nil {
		t.Fatal(err)
	}
	for _, hit := range hits {
		if strings.HasSuffix(hit.Source, "memory.md") {
			t.Errorf("memory file in room session: %+v", hit)
		}
	}
}

func TestSessionSizeCapStartsANewPart(t *testing.T) {
	h, p := newPalace(t)
	src := fixture(t, "claude-code.jsonl")
	opts := Options{Agent: "dave", Format: "claude-code", MaxSessionBytes: 600}
	res, err := Import(context.Background(), h, p, []string{src}, opts)
	if err != nil {
		t.Fatal(err)
	}
	text := sessionFiles(t, h, "dave")
	if n := strings.Count(text, "=== "); n < 2 {
		t.Fatalf("want several parts under a 600-byte cap, got %d:\n%s", n, text)
	}
	dir, _ := h.SessionsDir("dave")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, _ := e.Info(); strings.HasSuffix(e.Name(), ".md") && info.Size() > 600 {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			if f, _ := memfile.Parse(data); len(f.Sections) > 1 {
				t.Errorf("%s is %d bytes with %d sections: over the cap", e.Name(), info.Size(), len(f.Sections))
			}
		}
	}
	again, err := Import(context.Background(), h, p, []string{src}, opts)
	if err != nil || again.TurnsAdded != 0 {
		t.Errorf("re-import over parts: %d turns, %v", again.TurnsAdded, err)
	}
	if res.TurnsAdded == 0 || sessionFiles(t, h, "dave") != text {
		t.Error("re-import over parts changed them")
	}
}

func TestRetentionRemovesOldSessionsAndTheirDrawers(t *testing.T) {
	h, p := newPalace(t)
	opts := Options{Agent: "erin", Format: "claude-ai", Now: time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)}
	claude := fixture(t, "claude-ai.json")
	if _, err := Import(context.Background(), h, p, []string{claude}, opts); err != nil {
		t.Fatal(err)
	}
	dir, _ := h.SessionsDir("erin")
	old := fixedNow.Add(-40 * 24 * time.Hour)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") {
			if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Thirty days after the Codex session of 2026-11-28.
	opts = Options{Agent: "erin", Format: "codex", Now: fixedNow, RetentionDays: 30}
	res, err := Import(context.Background(), h, p, []string{fixture(t, "codex.jsonl")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 2 {
		t.Errorf("expired %v, want the two Claude conversations", res.Expired)
	}
	if text := sessionFiles(t, h, "erin"); strings.Contains(text, "Lisbon") || !strings.Contains(text, "/health") {
		t.Errorf("after retention:\n%s", text)
	}
	hits, err := p.Search(context.Background(), palace.Query{Text: "Lisbon", Mode: "lexical"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 {
		t.Errorf("expired sessions still searchable: %+v", hits)
	}
	// The source still has them: importing it again does not bring back
	// what retention removed.
	opts.Format = "claude-ai"
	res, err = Import(context.Background(), h, p, []string{claude}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 0 || len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, "older than capture.retention_days") {
		t.Errorf("re-import past retention: sessions %+v, skipped %+v", res.Sessions, res.Skipped)
	}
	if text := sessionFiles(t, h, "erin"); strings.Contains(text, "Lisbon") {
		t.Errorf("retention undone by a re-import:\n%s", text)
	}
}

// TestRetentionKeepsEveryPartOfALiveConversation: an old first part of a
// conversation that is still being written is not removed (its keys are
// what keeps its turns from being imported twice).
func TestRetentionKeepsEveryPartOfALiveConversation(t *testing.T) {
	h, p := newPalace(t)
	src := fixture(t, "claude-code.jsonl")
	opts := Options{Agent: "gus", Format: "claude-code", MaxSessionBytes: 600, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), RetentionDays: 30}
	if _, err := Import(context.Background(), h, p, []string{src}, opts); err != nil {
		t.Fatal(err)
	}
	before := sessionFiles(t, h, "gus")
	dir, _ := h.SessionsDir("gus")
	ents, _ := os.ReadDir(dir)
	old := fixedNow.Add(-90 * 24 * time.Hour)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") {
			if err := os.Chtimes(filepath.Join(dir, e.Name()), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := Import(context.Background(), h, p, []string{src}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 0 || res.TurnsAdded != 0 || sessionFiles(t, h, "gus") != before {
		t.Errorf("expired %v, added %d: parts of the live conversation removed or rewritten", res.Expired, res.TurnsAdded)
	}
}

func TestImportRefusesBadAgentAndFormat(t *testing.T) {
	h, p := newPalace(t)
	src := fixture(t, "generic.json")
	if _, err := Import(context.Background(), h, p, []string{src}, Options{Agent: "../x"}); !errors.Is(err, home.ErrInvalidAgentID) {
		t.Errorf("bad agent: %v", err)
	}
	if _, err := Import(context.Background(), h, p, []string{src}, Options{Agent: "a", Format: "slack"}); err == nil || !strings.Contains(err.Error(), `unknown format "slack"`) {
		t.Errorf("bad format: %v", err)
	}
	if _, err := Import(context.Background(), h, p, nil, Options{Agent: "a"}); err == nil {
		t.Error("no path: no error")
	}
}

// checkRendered holds what every parser's output must give once rendered:
// a session file that parses back into exactly the sections written, the
// header untouched, and every turn's key recoverable.
func checkRendered(t *testing.T, convs []Conversation) {
	t.Helper()
	for _, c := range convs {
		secs := sections(c.Turns, fixedNow)
		var took int
		data, err := appendSections([]byte(header(c, "fuzz")), secs, 1<<40, &took)
		if err != nil {
			t.Fatal(err)
		}
		if took != len(secs) {
			t.Fatalf("appended %d sections of %d", took, len(secs))
		}
		f, err := memfile.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Sections) != len(secs) {
			t.Fatalf("%d sections rendered, %d parsed:\n%s", len(secs), len(f.Sections), data)
		}
		keys := map[string]bool{}
		if err := keysIn(data, keys); err != nil {
			t.Fatal(err)
		}
		for _, turn := range c.Turns {
			if !keys[turnKey(turn.Key)] {
				t.Fatalf("key of turn %q lost:\n%s", turn.Key, data)
			}
		}
		if !bytes.HasPrefix(data, []byte("# Session — ")) {
			t.Fatalf("header lost:\n%s", data)
		}
	}
}

func fuzzParser(f *testing.F, format string, seeds ...string) {
	for _, fx := range fixtures {
		if fx.format == format {
			data, err := os.ReadFile(filepath.Join("testdata", fx.file))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := Parse(format, "fuzz", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkRendered(t, convs)
	})
}

func FuzzClaudeCode(f *testing.F) {
	fuzzParser(f, "claude-code", `{"type":"user","message":{"role":"user","content":"## x\n`+"```"+`"}}`)
}

func FuzzCodex(f *testing.F) {
	fuzzParser(f, "codex", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"a\n## b"}]}}`)
}

func FuzzChatGPT(f *testing.F) {
	fuzzParser(f, "chatgpt", `[{"conversation_id":"x","mapping":{"a":{"message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["hi"]}}}}}]`)
}

func FuzzClaudeAI(f *testing.F) {
	fuzzParser(f, "claude-ai", `[{"uuid":"u","chat_messages":[{"sender":"human","text":"~~~\n## a"}]}]`)
}

func FuzzGeneric(f *testing.F) {
	fuzzParser(f, "generic", `{"role":"user","content":"<!-- hivemem:turns 000000000000 -->\nx"}`)
}

func FuzzTranscript(f *testing.F) {
	fuzzParser(f, "markdown", "user: a\n```\n## b\nassistant: c\n<!-- hivemem:turns x -->")
}

func TestImportDirectoryTakesItsConversationFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"claude-code.jsonl", "codex.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, p := newPalace(t)
	res, err := Import(context.Background(), h, p, []string{dir}, Options{Agent: "fay", Format: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 || res.Sessions[0].Format != "claude-code" {
		t.Errorf("claude-code from a directory: %+v", res.Sessions)
	}
	res, err = Import(context.Background(), h, p, []string{dir}, Options{Agent: "fay", Format: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 2 || res.TurnsAdded == 0 {
		t.Errorf("auto from a directory: %+v", res.Sessions)
	}
	if _, err := Import(context.Background(), h, p, []string{dir}, Options{Agent: "fay", Format: "chatgpt"}); err == nil || !strings.Contains(err.Error(), "no chatgpt files found") {
		t.Errorf("a directory without the format: %v", err)
	}
}

// BenchmarkSaveGrownTranscript times what a hook's save costs on a long
// session: a Claude Code transcript of 4000 turns, two turns longer at
// each save (parse it all, read the keys, append, mine the new section).
func BenchmarkSaveGrownTranscript(b *testing.B) {
	line := func(i int) string {
		role, typ := "user", "user"
		if i%2 == 1 {
			role, typ = "assistant", "assistant"
		}
		return fmt.Sprintf(`{"type":%q,"sessionId":"bench","uuid":"u%d","timestamp":"2026-11-29T10:%02d:%02dZ","message":{"role":%q,"content":"turn %d: the deploy script touches the cron table and the backup job, again and again"}}`+"\n",
			typ, i, (i/60)%60, i%60, role, i)
	}
	var buf strings.Builder
	for i := 0; i < 4000; i++ {
		buf.WriteString(line(i))
	}
	h, p := newPalace(b)
	src := filepath.Join(b.TempDir(), "s.jsonl")
	if err := os.WriteFile(src, []byte(buf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := Options{Agent: "bench", Format: "claude-code", MaxSessionBytes: 8 << 20}
	start := time.Now()
	if _, err := Import(context.Background(), h, p, []string{src}, opts); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	n := 4000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f, err := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteString(line(n) + line(n+1))
		f.Close()
		n += 2
		b.StartTimer()
		res, err := Import(context.Background(), h, p, []string{src}, opts)
		if err != nil || res.TurnsAdded != 2 {
			b.Fatalf("%d turns, %v", res.TurnsAdded, err)
		}
	}
	b.ReportMetric(first.Seconds(), "first-import-s")
}

// BenchmarkImportManySessions times a bulk import such as a benchmark's
// haystack: one generic file of 200 sessions of 10 turns, into a fresh
// home each time.
func BenchmarkImportManySessions(b *testing.B) {
	var buf strings.Builder
	for s := 0; s < 200; s++ {
		for t := 0; t < 10; t++ {
			role := "user"
			if t%2 == 1 {
				role = "assistant"
			}
			fmt.Fprintf(&buf, `{"role":%q,"content":"session %d turn %d: we talked about the trip to Lisbon and the vegetarian places","session":"s%d","timestamp":"2023/05/%02d (Sat) 10:%02d"}`+"\n",
				role, s, t, s, 1+s%28, t)
		}
	}
	src := filepath.Join(b.TempDir(), "haystack.jsonl")
	if err := os.WriteFile(src, []byte(buf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := hometest.New(b)
		p, st := hometest.Palace(b, h, nil, palace.Options{})
		b.StartTimer()
		res, err := Import(context.Background(), h, p, []string{src}, Options{Agent: "bench", Format: "generic"})
		if err != nil || len(res.Sessions) != 200 {
			b.Fatalf("%d sessions, %v", len(res.Sessions), err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}

// An exchange's heading repeats the opening of its first turn; the miner
// embeds that opening once (chunk.Chunk.EmbedText), which holds only as
// long as the heading is written the way the chunker recognises.
func TestExchangeOpeningIsEmbeddedOnce(t *testing.T) {
	at := time.Date(2023, 5, 22, 1, 26, 0, 0, time.UTC)
	cases := []struct {
		name    string
		turns   []Turn
		opening string // "" when the heading must stay whole
	}{
		{"a long turn, its heading cut", []Turn{
			{Key: "1", Role: RoleUser, Time: at, Text: "I'm looking for some healthy meal ideas for my busy weekdays. By the way, I had Domino's Pizza three times last week!"},
			{Key: "2", Role: RoleAssistant, Time: at, Text: "Here are a few."},
		}, "I'm looking for some healthy meal ideas"},
		{"a short turn", []Turn{{Key: "1", Role: RoleUser, Time: at, Text: "fix the login test"}}, "fix the login test"},
		{"a turn of several lines", []Turn{{Key: "1", Role: RoleUser, Time: at, Text: "first line\nsecond line\n\nthird paragraph"}}, "first line"},
		{"an exchange the assistant opens", []Turn{{Key: "1", Role: RoleAssistant, Time: at, Text: "Welcome back."}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := appendSections([]byte(header(Conversation{Format: "generic", ID: "x", Turns: c.turns}, "a")), sections(c.turns, fixedNow), 1<<40, new(int))
			if err != nil {
				t.Fatal(err)
			}
			f, err := memfile.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			chunks := chunk.File(f, 0)
			if len(chunks) != 1 {
				t.Fatalf("%d chunks, want 1:\n%s", len(chunks), data)
			}
			ch := chunks[0]
			got := ch.EmbedText()
			if c.opening == "" {
				if got != ch.Heading+"\n"+ch.Text {
					t.Fatalf("heading not kept whole: %q", got)
				}
				return
			}
			if n := strings.Count(got, c.opening); n != 1 {
				t.Fatalf("opening %q embedded %d times in %q", c.opening, n, got)
			}
			if want := "2023-05-22 01:26\n" + ch.Text; got != want {
				t.Fatalf("EmbedText = %q, want %q", got, want)
			}
		})
	}
}
