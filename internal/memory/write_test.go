package memory_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
)

// TestFileWritesReportWhatTheyWrote: Remember, Supersede and Pin report
// the section appended (and replaced) and the pinned count as their own
// write left the file, not as the file stands after another writer's
// append.
func TestFileWritesReportWhatTheyWrote(t *testing.T) {
	ctx := context.Background()
	h := hometest.New(t)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	first, err := memory.Remember(ctx, h, "alice", "", "deploy with make deploy\n", now)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := h.MemoryPath("alice")
	appendRaw := func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("## 2026-12-02 — by hand\nan agent's own line\n"); err != nil {
			t.Fatal(err)
		}
	}
	appendRaw()
	second, err := memory.Supersede(ctx, h, "alice", first.Section.Heading, "deploy", "deploy with make release\n", now)
	if err != nil {
		t.Fatal(err)
	}
	appendRaw()
	pin, err := memory.Pin(ctx, h, "alice", "releases ship on Tuesdays")
	if err != nil {
		t.Fatal(err)
	}
	appendRaw()

	if !first.Created || second.Created || !pin.Added || pin.Pinned != 1 {
		t.Errorf("created %v, %v; pin added %v with %d pinned; want true, false, true, 1", first.Created, second.Created, pin.Added, pin.Pinned)
	}
	_, f := hometest.ReadMemory(t, path)
	// No write changed the lines before its section: each is in the file
	// where it said, with the heading and the text it wrote.
	at := func(s memfile.Section) memfile.Section {
		for _, g := range f.Sections {
			if g.StartLine == s.StartLine {
				return g
			}
		}
		return memfile.Section{}
	}
	for _, tc := range []struct {
		name    string
		got     memfile.Section
		heading string
		marked  int // lines a later write added (the superseded-by marker)
	}{
		{"remember", first.Section, "2026-12-02 — deploy with make deploy", 1},
		{"supersede", second.Section, "2026-12-02 — deploy", 0},
		{"superseded", second.Superseded, "2026-12-02 — deploy with make deploy", 0},
	} {
		if tc.got.Heading != tc.heading || tc.got.Date != "2026-12-02" {
			t.Errorf("%s reported %+v; want heading %q", tc.name, tc.got, tc.heading)
		}
		if g := at(tc.got); g.Heading != tc.got.Heading || g.EndLine-g.StartLine != tc.got.EndLine-tc.got.StartLine+tc.marked {
			t.Errorf("%s reported %+v; the file has %+v there", tc.name, tc.got, g)
		}
	}
	if second.Superseded.SupersededBy != "2026-12-02 — deploy" || second.Section.Supersedes != "2026-12-02 — deploy with make deploy" {
		t.Errorf("supersede reported %+v replacing %+v", second.Section, second.Superseded)
	}
}

// TestRememberBlankHeading: a heading of blanks is no heading: the note's
// first line stands in, as for an empty one; a padded heading is trimmed.
func TestRememberBlankHeading(t *testing.T) {
	h := hometest.New(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ heading, want string }{
		{" \t ", "## 2026-11-29 — the cache key includes the locale\n"},
		{"  cache  ", "## 2026-11-29 — cache\n"},
	} {
		if _, err := memory.Remember(context.Background(), h, "alice", c.heading, "the cache key includes the locale", now); err != nil {
			t.Fatal(err)
		}
		path, _ := h.MemoryPath("alice")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.want) {
			t.Errorf("heading %q: file lacks %q:\n%s", c.heading, c.want, data)
		}
	}
}

// TestWritesRefuseBadInputAndWriteNothing: a path trick for an agent, an
// empty note or fact, a fact or heading of two lines, a display name of
// two lines are refused, and no file is made.
func TestWritesRefuseBadInputAndWriteNothing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, agent string
		write       func(h home.Home) error
	}{
		{"remember: a path trick", "../etc", func(h home.Home) error {
			_, err := memory.Remember(ctx, h, "../etc", "", "x", now)
			return err
		}},
		{"remember: empty text", "carol", func(h home.Home) error {
			_, err := memory.Remember(ctx, h, "carol", "", " \n", now)
			return err
		}},
		{"remember: a heading of two lines", "carol", func(h home.Home) error {
			_, err := memory.Remember(ctx, h, "carol", "a\nb", "x", now)
			return err
		}},
		{"pin: empty fact", "carol", func(h home.Home) error {
			_, err := memory.Pin(ctx, h, "carol", "  ")
			return err
		}},
		{"pin: a fact of two lines", "carol", func(h home.Home) error {
			_, err := memory.Pin(ctx, h, "carol", "a\nb")
			return err
		}},
		{"create: a path trick", "../x", func(h home.Home) error {
			_, _, err := memory.Create(ctx, h, "../x", "")
			return err
		}},
		{"create: a name of two lines", "carol", func(h home.Home) error {
			_, _, err := memory.Create(ctx, h, "carol", "Carol\n## injected")
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := hometest.New(t)
			if err := c.write(h); err == nil {
				t.Fatal("accepted")
			}
			entries, err := os.ReadDir(h.AgentsDir())
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("a refused write left %d entries in %s", len(entries), h.AgentsDir())
			}
		})
	}
}

// TestPinOfAPinnedFactWritesNothing: pinning a fact that is pinned
// already, in other spacing or with a list marker, reports it not added
// and leaves the file as it was.
func TestPinOfAPinnedFactWritesNothing(t *testing.T) {
	ctx := context.Background()
	h := hometest.New(t)
	first, err := memory.Pin(ctx, h, "carol", "Releases ship on Tuesdays")
	if err != nil || !first.Added || !first.Created || first.Pinned != 1 {
		t.Fatalf("pin: %+v, %v", first, err)
	}
	path, _ := h.MemoryPath("carol")
	before, _ := os.ReadFile(path)
	again, err := memory.Pin(ctx, h, "carol", "- Releases ship on Tuesdays")
	if err != nil || again.Added || again.Created {
		t.Fatalf("second pin: %+v, %v; want not added", again, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the file changed:\n%s\nwas\n%s", after, before)
	}
}
