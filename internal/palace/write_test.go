package palace_test

import (
	"context"
	"os"
	"strings"
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

// TestRememberHeadingCutsAtAWord: a note remembered without a heading is
// headed by its first line, cut — when too long — at the end of its first
// sentence or at a word, never inside a word; and wake-up shows that first
// line once, not as the heading and again after it.
func TestRememberHeadingCutsAtAWord(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, text, heading, wake string
	}{{
		name:    "a long first sentence is cut at a word",
		text:    "Customer Acme uses SSO via Okta; their admin contact is Priya Raman (priya@acme.example).",
		heading: "2026-12-06 — Customer Acme uses SSO via Okta; their admin contact is…",
		wake:    "- 2026-12-06 — Customer Acme uses SSO via Okta; their admin contact is Priya Raman (priya@acme.example).\n",
	}, {
		name:    "a first sentence within the bound is kept whole",
		text:    "The staging database moved to pg-2. Its old host is switched off on Friday after the backup.",
		heading: "2026-12-06 — The staging database moved to pg-2. …",
		wake:    "- 2026-12-06 — The staging database moved to pg-2. Its old host is switched off on Friday after the backup.\n",
	}, {
		name:    "a short note is its own heading, shown once",
		text:    "Deploys go out on Thursdays at nine.",
		heading: "2026-12-06 — Deploys go out on Thursdays at nine.",
		wake:    "- 2026-12-06 — Deploys go out on Thursdays at nine.\n",
	}, {
		name:    "a word longer than the bound is cut inside itself",
		text:    "https://example.com/" + strings.Repeat("a", 80) + " is the runbook",
		heading: "2026-12-06 — https://example.com/" + strings.Repeat("a", 40) + "…",
		wake:    "- 2026-12-06 — https://example.com/" + strings.Repeat("a", 80) + " is the runbook\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			w, err := palace.RememberFile(context.Background(), f.h, "alice", "", c.text, now)
			if err != nil {
				t.Fatal(err)
			}
			if w.Section.Heading != c.heading {
				t.Errorf("heading = %q\nwant      %q", w.Section.Heading, c.heading)
			}
			d, err := f.p.WakeUp(context.Background(), "alice", 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(d.Text, c.wake) {
				t.Errorf("wake-up lacks %q:\n%s", c.wake, d.Text)
			}
		})
	}
}
