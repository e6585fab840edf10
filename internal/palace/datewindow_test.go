package palace_test

import (
	"context"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// concerts is a memory file with two sections that match a query about
// the concert equally, on two Saturdays five weeks apart.
const concerts = "# Memory — Alice\n\n" +
	"## 2023-03-04 — concert\nWent to the jazz concert at the harbour hall with Ben.\n\n" +
	"## 2023-04-15 — concert\nWent to the jazz concert at the harbour hall with Ana.\n\n" +
	"## notes\nThe jazz concert tickets are in the drawer.\n"

// A section dated at the time the query names outranks an equally
// matching one dated elsewhere, whichever of the two it is, under score
// fusion and under RRF alike; every other hit keeps the score it has for
// the query without the time.
func TestSearchFavoursTheSectionDatedWhenTheQuerySays(t *testing.T) {
	for _, fusion := range []string{palace.FusionScore, palace.FusionRRF} {
		t.Run(fusion, func(t *testing.T) {
			h := hometest.New(t)
			p, _ := hometest.Palace(t, h, nil, palace.Options{Fusion: fusion})
			hometest.WriteMemory(t, h, "alice", concerts)
			ctx := context.Background()
			if _, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			search := func(text, asOf string) []palace.Hit {
				hits, err := p.Search(ctx, palace.Query{Text: text, AsOf: asOf, Results: 3})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != 3 {
					t.Fatalf("%q: %d hits, want 3", text, len(hits))
				}
				return hits
			}
			plain := map[string]float64{}
			for _, h := range search("who came to the jazz concert", "") {
				plain[h.ID] = h.Score
			}
			for _, c := range []struct {
				asOf, want string
			}{
				{"2023-04-22", "2023-04-15"}, // last Saturday: the 15th
				{"2023-03-08", "2023-03-04"}, // last Saturday: the 4th
			} {
				hits := search("who came to the jazz concert last Saturday", c.asOf)
				if hits[0].Date != c.want {
					t.Fatalf("as of %s: hits %v, want the section of %s first", c.asOf, dates(hits), c.want)
				}
				for _, h := range hits[1:] {
					if h.Score != plain[h.ID] {
						t.Errorf("as of %s: the section of %q scores %v, %v without the time", c.asOf, h.Date, h.Score, plain[h.ID])
					}
				}
			}
		})
	}
}

// Without a time in the query, or with one no candidate is dated in, the
// ranking is the plain one: the same hits with the same scores.
func TestSearchWithoutADatedCandidateKeepsTheRanking(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", concerts)
	f.mine()
	ctx := context.Background()
	search := func(text, asOf string) []palace.Hit {
		hits, err := f.p.Search(ctx, palace.Query{Text: text, AsOf: asOf, Results: 3, Filter: store.Filter{Wing: "alice"}})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	plain := search("who came to the jazz concert", "")
	for _, c := range []struct{ text, asOf string }{
		{"who came to the jazz concert", "2023-04-22"},               // no time named
		{"who came to the jazz concert last Saturday", "2024-06-01"}, // no section dated then
		{"who came to the jazz concert last Saturday", ""},           // as of today
	} {
		got := search(c.text, c.asOf)
		if len(got) != len(plain) {
			t.Fatalf("%q as of %q: %d hits, want %d", c.text, c.asOf, len(got), len(plain))
		}
		for i := range got {
			if got[i].ID != plain[i].ID || got[i].Score != plain[i].Score {
				t.Errorf("%q as of %q: hit %d is %s (%v), want %s (%v)", c.text, c.asOf, i, got[i].Date, got[i].Score, plain[i].Date, plain[i].Score)
			}
		}
	}
}

func dates(hits []palace.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Date
		if out[i] == "" {
			out[i] = "undated"
		}
	}
	return out
}
