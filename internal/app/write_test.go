package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
)

// openLexical opens a new home with no embedder.
func openLexical(t *testing.T) *App {
	t.Helper()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	return openAt(t, t.TempDir())
}

// TestWriteRequestsRefuseBadInput: a remember or pin with a bad agent, a
// caller writing to another agent's memory, or text that is no note or
// fact is refused as bad input (ErrInvalid) and writes nothing.
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
		{"remember: too long", RememberRequest{Agent: "alice", Text: strings.Repeat("x", MaxRememberBytes+1)}, "at most"},
		{"remember: two-line heading", RememberRequest{Agent: "alice", Text: "x", Heading: "a\nb"}, "one line"},
		{"pin: no agent, no caller", PinRequest{Fact: "x"}, "agent is required"},
		{"pin: another agent than the caller", PinRequest{Agent: "bob", Fact: "x", Scope: bound}, `writes only to agent "carol"`},
		{"pin: two lines", PinRequest{Agent: "alice", Fact: "a\nb"}, "one line"},
		{"pin: too long", PinRequest{Agent: "alice", Fact: strings.Repeat("f", memfile.MaxFactBytes+1)}, "at most"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			switch r := c.req.(type) {
			case RememberRequest:
				_, err = a.Remember(context.Background(), r)
			case PinRequest:
				_, err = a.Pin(context.Background(), r)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a bad request saying %q", err, c.want)
			}
		})
	}
	if ids, err := a.home.Agents(); err != nil || len(ids) != 0 {
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
	a, err := openTest(context.Background(), root, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A directory where the index file goes: the index cannot be opened.
	if err := os.MkdirAll(a.home.PalaceDir()+"/palace.db/x", 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := a.Remember(context.Background(), RememberRequest{Agent: "alice", Text: "kept whatever the index does"})
	if err != nil {
		t.Fatal(err)
	}
	if res.MineError == "" || res.DrawersAdded != 0 || res.Section.StartLine == 0 {
		t.Fatalf("remember = %+v; want the section written and the index's failure in mine_error", res)
	}
	data, err := os.ReadFile(a.home.Abs(res.Source))
	if err != nil || !strings.Contains(string(data), "kept whatever the index does") {
		t.Fatalf("note not saved: %v\n%s", err, data)
	}
}

// TestConcurrentWritesReportWhatTheyWrote: writers remember (some
// superseding their previous note) and pin on the same agent while
// others forget what they wrote and an agent appends sections of the same
// day by hand. Every remember reports the section it appended (its
// heading, its lines), every supersede the section it replaced, and every
// pin a count of pinned facts no other pin reports (each is counted under
// the lock of its own write).
func TestConcurrentWritesReportWhatTheyWrote(t *testing.T) {
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "none")
	root := filepath.Join(t.TempDir(), "home")
	apps := []*App{openAt(t, root), openAt(t, root)}
	ctx := context.Background()
	if _, err := apps[0].Remember(ctx, RememberRequest{Agent: "alice", Text: "first note"}); err != nil {
		t.Fatal(err)
	}
	path, _ := apps[0].home.MemoryPath("alice")
	day := time.Now().UTC().Format("2006-01-02") + " — "

	const writers, per = 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, 10*writers*per)
	var mu sync.Mutex
	pinned := map[int]string{}
	for w := range writers {
		a := apps[w%len(apps)]
		wg.Go(func() {
			prev := ""
			for i := range per {
				title := fmt.Sprintf("note %d-%d", w, i)
				req := RememberRequest{Agent: "alice", Text: title + "\nNOTE-" + title + "\n", Force: true}
				if i%3 == 2 && prev != "" {
					req.Supersedes = prev
				}
				res, err := a.Remember(ctx, req)
				if err != nil {
					errs <- fmt.Errorf("remember %s: %w", title, err)
					continue
				}
				if s := res.Section; s.Heading != day+title || s.EndLine-s.StartLine != 2+boolInt(req.Supersedes != "") || s.Kind != "section" {
					errs <- fmt.Errorf("remember %s reported section %+v", title, s)
				}
				if req.Supersedes != "" && (res.Supersedes == nil || res.Supersedes.Heading != prev || res.Supersedes.StartLine == 0) {
					errs <- fmt.Errorf("remember %s superseding %q reported %+v", title, prev, res.Supersedes)
				}
				prev = res.Section.Heading
				if i%2 == 1 && req.Supersedes == "" {
					if _, err := a.Forget(ctx, ForgetRequest{Agent: "alice", Heading: res.Section.Heading}); err != nil {
						errs <- fmt.Errorf("forget %s: %w", title, err)
					}
					prev = ""
				}
				fact := "PIN-" + title
				p, err := a.Pin(ctx, PinRequest{Agent: "alice", Fact: fact, Force: true})
				if err != nil {
					errs <- fmt.Errorf("pin %s: %w", title, err)
					continue
				}
				mu.Lock()
				if other, ok := pinned[p.Pinned]; ok {
					errs <- fmt.Errorf("pin %s and %s both reported %d pinned facts", fact, other, p.Pinned)
				}
				pinned[p.Pinned] = fact
				mu.Unlock()
			}
		})
	}
	wg.Go(func() { appendByHand(path, time.Now().UTC().Format("2006-01-02"), writers*per, errs) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
