package app

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// Only the supersession markers at the start of a section are left out of
// the note the duplicate check compares (memfile's rule): a marker-like
// line quoted in the middle of a note is its text, so the note without
// that line is news, and the note with it is the repeat.
func TestAQuotedMarkerInANoteIsItsText(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	quoted := "The runbook said:\n> superseded by: the wiki page on releases\nDeploy the shop with make deploy."
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "runbook quote", Text: quoted}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text   string
		repeat bool
	}{
		{"The runbook said:\nDeploy the shop with make deploy.", false},
		{quoted, true},
	}
	for _, tc := range tests {
		res, err := a.Remember(ctx, RememberRequest{Agent: "alice", Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Duplicate != nil; got != tc.repeat {
			t.Errorf("remember %q: repeat = %v (%+v), want %v", tc.text, got, res.Duplicate, tc.repeat)
		}
	}
}

// TestAChangedNoteIsWrittenAndNamesWhatItRestates: a note that changes a
// value of an older one is written (never refused as a repeat), one
// drawer added, and the result names the older note's drawer id; the
// agent's confirmation (remember --supersedes that id, the same text)
// marks the older note without writing the note twice, and the older
// note keeps its drawer id. Before, the change was refused as "same
// words", and marking changed the old drawer's id (and so counted 2
// drawers added).
func TestAChangedNoteIsWrittenAndNamesWhatItRestates(t *testing.T) {
	a := openLexical(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	old, err := a.Remember(ctx, RememberRequest{Agent: "ops", Text: "The feature flag for search is on", Heading: "search flag", Now: day})
	if err != nil || old.DrawersAdded != 1 {
		t.Fatalf("first note: %+v, %v", old, err)
	}
	oldID := drawerAt(t, a, "ops", old.Section.StartLine)

	neu, err := a.Remember(ctx, RememberRequest{Agent: "ops", Text: "The feature flag for search is off", Heading: "search flag", Now: day.AddDate(0, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if neu.Duplicate != nil || neu.DrawersAdded != 1 {
		t.Fatalf("changed note: %+v; want written, 1 drawer added", neu)
	}
	if neu.Restates == nil || neu.Restates.Of != oldID || neu.Restates.Heading != old.Section.Heading {
		t.Fatalf("changed note restates %+v; want drawer %s (%s)", neu.Restates, oldID, old.Section.Heading)
	}

	conf, err := a.Remember(ctx, RememberRequest{Agent: "ops", Text: "The feature flag for search is off", Supersedes: oldID, Now: day.AddDate(0, 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if conf.Duplicate != nil || !conf.Existing || conf.Supersedes == nil || conf.Section.Heading != neu.Section.Heading || conf.DrawersAdded != 0 {
		t.Fatalf("confirmation: %+v; want the existing note to supersede the old one, nothing added", conf)
	}
	path, _ := a.home.MemoryPath("ops")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "is off"); n != 1 {
		t.Errorf("the note is in the file %d times, want once", n)
	}
	if id := drawerAt(t, a, "ops", old.Section.StartLine); id != oldID {
		t.Errorf("marking the old section superseded changed its drawer id from %s to %s", oldID, id)
	}

	// An explicit --supersedes with a new note: one drawer added, the old
	// id kept.
	third, err := a.Remember(ctx, RememberRequest{Agent: "ops", Text: "The feature flag for search is on again", Supersedes: neu.Section.Heading, Now: day.AddDate(0, 2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if third.DrawersAdded != 1 || third.Supersedes == nil {
		t.Errorf("remember --supersedes: %+v; want 1 drawer added", third)
	}
}

// TestPinWritesAChangedFact: pinning "down" after "up" pins it (before,
// it was refused as a paraphrase) and names the fact it restates.
func TestPinWritesAChangedFact(t *testing.T) {
	a := openLexical(t)
	ctx := context.Background()
	if _, err := a.Pin(ctx, PinRequest{Agent: "ops", Fact: "The VPN is up"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Pin(ctx, PinRequest{Agent: "ops", Fact: "The VPN is down"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Added || res.Duplicate != nil || res.Pinned != 2 || res.Restates == nil || res.Restates.Of != "The VPN is up" {
		t.Fatalf("pin = %+v; want added, restating %q", res, "The VPN is up")
	}
	again, err := a.Pin(ctx, PinRequest{Agent: "ops", Fact: "the VPN is down!"})
	if err != nil || again.Duplicate == nil && again.Added {
		t.Fatalf("pin of a rewording = %+v, %v; want refused", again, err)
	}
}

// drawerAt is the id of the drawer of agent's memory file that starts at
// line.
func drawerAt(t *testing.T, a *App, agent string, line int) string {
	t.Helper()
	ds, err := a.store.Drawers(context.Background(), "hive/agents/"+agent+"/memory.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.LineStart == line {
			return d.ID
		}
	}
	t.Fatalf("no drawer of %s starts at line %d", agent, line)
	return ""
}
