package app

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/palace"
)

// openLexical opens a new home with no embedder.
func openLexical(t *testing.T) *App {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	return openAt(t, t.TempDir())
}

// TestWriteRequestsRefuseBadInput: a remember or pin with a bad agent, a
// caller writing to another agent's memory, or text that is no note or
// fact is refused as bad input (palace.ErrBadQuery) and writes nothing.
func TestWriteRequestsRefuseBadInput(t *testing.T) {
	a := openLexical(t)
	bound := Scope{Caller: "carol"}
	for _, c := range []struct {
		name string
		req  any
		want string
	}{
		{"remember: no agent, no caller", RememberRequest{Text: "x"}, "agent is required"},
		{"remember: a path for an agent", RememberRequest{Agent: "../x", Text: "x"}, "invalid agent id"},
		{"remember: another agent than the caller", RememberRequest{Agent: "alice", Text: "x", Scope: bound}, `writes only to agent "carol"`},
		{"remember: blank text", RememberRequest{Agent: "alice", Text: " \n"}, "text is empty"},
		{"remember: NUL", RememberRequest{Agent: "alice", Text: "a\x00b"}, "NUL"},
		{"remember: too long", RememberRequest{Agent: "alice", Text: strings.Repeat("x", palace.MaxRememberBytes+1)}, "at most"},
		{"remember: two-line heading", RememberRequest{Agent: "alice", Text: "x", Heading: "a\nb"}, "one line"},
		{"pin: no agent, no caller", PinRequest{Fact: "x"}, "agent is required"},
		{"pin: another agent than the caller", PinRequest{Agent: "bob", Fact: "x", Scope: bound}, `writes only to agent "carol"`},
		{"pin: two lines", PinRequest{Agent: "alice", Fact: "a\nb"}, "one line"},
		{"pin: too long", PinRequest{Agent: "alice", Fact: strings.Repeat("f", palace.MaxFactBytes+1)}, "at most"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			switch r := c.req.(type) {
			case RememberRequest:
				_, err = a.Remember(context.Background(), r)
			case PinRequest:
				_, err = a.Pin(context.Background(), r)
			}
			if !errors.Is(err, palace.ErrBadQuery) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a bad request saying %q", err, c.want)
			}
		})
	}
	if ids, err := a.Home.Agents(); err != nil || len(ids) != 0 {
		t.Fatalf("refused writes made agents %v (%v)", ids, err)
	}
}

// TestRememberAndPinAreSearchableAtOnce: a bound caller's note and fact
// land in its own file, are mined at once, and the results say where.
func TestRememberAndPinAreSearchableAtOnce(t *testing.T) {
	a := openLexical(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	me := Scope{Caller: "carol"}
	rem, err := a.Remember(ctx, RememberRequest{Text: "The deploy key rotates monthly.", Heading: "deploy key", Now: now, Scope: me})
	if err != nil {
		t.Fatal(err)
	}
	if rem.Agent != "carol" || !rem.Created || rem.Source != "hive/agents/carol/memory.md" || rem.DrawersAdded != 1 ||
		rem.MineError != "" || rem.Section.Heading != "2026-11-29 — deploy key" || rem.Section.StartLine == 0 {
		t.Fatalf("remember = %+v", rem)
	}
	pin, err := a.Pin(ctx, PinRequest{Fact: "Releases ship on Tuesdays.", Scope: me})
	if err != nil {
		t.Fatal(err)
	}
	if !pin.Added || pin.Created || pin.Pinned != 1 || pin.MineError != "" {
		t.Fatalf("pin = %+v", pin)
	}
	again, err := a.Pin(ctx, PinRequest{Agent: "carol", Fact: " Releases ship on Tuesdays. "})
	if err != nil || again.Added || again.Pinned != 1 {
		t.Fatalf("pin again = %+v, %v; want not added", again, err)
	}
	for _, q := range []string{"deploy key rotates", "releases tuesdays"} {
		res, err := a.Search(ctx, SearchRequest{Query: q, Wing: "carol"})
		if err != nil || len(res.Hits) == 0 {
			t.Errorf("search %q: %+v, %v; want a hit at once", q, res, err)
		}
	}
}

// TestRememberBeforeTheIndex: an app opened with IndexLater writes the
// note before it opens the index, and an index that cannot be opened is
// the result's mine error, not a lost note.
func TestRememberBeforeTheIndex(t *testing.T) {
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	root := t.TempDir()
	if _, _, err := OpenHome(Options{Home: root, Create: true}); err != nil {
		t.Fatal(err)
	}
	a, err := Open(context.Background(), Options{Home: root, IndexLater: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A directory where the index file goes: the index cannot be opened.
	if err := os.MkdirAll(a.Home.PalaceDir()+"/palace.db/x", 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := a.Remember(context.Background(), RememberRequest{Agent: "alice", Text: "kept whatever the index does"})
	if err != nil {
		t.Fatal(err)
	}
	if res.MineError == "" || res.DrawersAdded != 0 || res.Section.StartLine == 0 {
		t.Fatalf("remember = %+v; want the section written and the index's failure in mine_error", res)
	}
	data, err := os.ReadFile(a.Home.Abs(res.Source))
	if err != nil || !strings.Contains(string(data), "kept whatever the index does") {
		t.Fatalf("note not saved: %v\n%s", err, data)
	}
}
