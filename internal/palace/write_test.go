package palace_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
)

// TestFileWritesReportWhatTheyWrote: RememberFile, SupersedeFile and
// PinFile report the section appended (and replaced) and the pinned count
// as their own write left the file, not as the file stands after another
// writer's append.
func TestFileWritesReportWhatTheyWrote(t *testing.T) {
	ctx := context.Background()
	h := hometest.New(t)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	first, err := palace.RememberFile(ctx, h, "alice", "", "deploy with make deploy\n", now)
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
	second, err := palace.SupersedeFile(ctx, h, "alice", first.Section.Heading, "deploy", "deploy with make release\n", now)
	if err != nil {
		t.Fatal(err)
	}
	appendRaw()
	pin, err := palace.PinFile(ctx, h, "alice", "releases ship on Tuesdays")
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
