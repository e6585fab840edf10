package app

import (
	"context"
	"testing"
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
