package palace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// A section marked "> superseded by:" is mined with the id of the section
// that replaces it, and search leaves it out unless asked to include it.
func TestSupersededSectionsLeaveSearch(t *testing.T) {
	for _, mode := range []string{palace.ModeLexical, palace.ModeHybrid} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, &countingEmbedder{})
			f.write("alice", "# Memory\n"+
				"## 2026-11-02 — deploy command\n> superseded by: 2026-12-01 — deploy command\nDeploy the shop with make deploy.\n"+
				"## 2026-11-05 — other\nThe shop has a blue logo.\n"+
				"## 2026-12-01 — deploy command\n> supersedes: 2026-11-02 — deploy command\nDeploy the shop with make release.\n")
			f.mine()
			ds, err := f.st.List(context.Background(), store.Filter{Agent: "alice"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			byHeading := map[string]store.Drawer{}
			for _, d := range ds {
				byHeading[d.Heading+" "+d.Date] = d
			}
			old, cur := byHeading["2026-11-02 — deploy command 2026-11-02"], byHeading["2026-12-01 — deploy command 2026-12-01"]
			if old.SupersededBy != cur.ID || cur.ID == "" || cur.SupersededBy != "" {
				t.Fatalf("old.SupersededBy = %q, current id %q (current's %q)", old.SupersededBy, cur.ID, cur.SupersededBy)
			}
			search := func(include bool) []string {
				hits, err := f.p.Search(context.Background(), palace.Query{Text: "deploy the shop make", Mode: mode, Results: 10, IncludeSuperseded: include})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, h := range hits {
					ids = append(ids, h.ID)
				}
				return ids
			}
			if got := strings.Join(search(false), ","); strings.Contains(got, old.ID) || !strings.Contains(got, cur.ID) {
				t.Errorf("search = %s: want %s and not the superseded %s", got, cur.ID, old.ID)
			}
			if got := strings.Join(search(true), ","); !strings.Contains(got, old.ID) {
				t.Errorf("search with superseded = %s: want %s", got, old.ID)
			}
		})
	}
}

// Superseded drawers that crowd the top of a ranking do not cut the
// number of hits: the next candidates take their place.
func TestSupersededDrawersDoNotShortenResults(t *testing.T) {
	f := newFixture(t, nil)
	var b strings.Builder
	b.WriteString("# Memory\n")
	for i := range 30 {
		b.WriteString("## 2026-11-01 — kiwi " + strings.Repeat("x", i+1) + "\n> superseded by: 2026-12-01 — now\nkiwi kiwi kiwi kiwi\n")
	}
	for i := range 5 {
		b.WriteString("## 2026-12-0" + string(rune('1'+i)) + " — kiwi current " + string(rune('a'+i)) + "\nkiwi and many other words that dilute the score a lot here\n")
	}
	f.write("bob", b.String())
	f.mine()
	hits, err := f.p.Search(context.Background(), palace.Query{Text: "kiwi", Mode: palace.ModeLexical, Results: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("%d hits, want 5", len(hits))
	}
	for _, h := range hits {
		if !strings.Contains(h.Heading, "current") {
			t.Errorf("hit %q is superseded", h.Heading)
		}
	}
}
