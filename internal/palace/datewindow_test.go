package palace_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/modelfetch"
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

// cacheNotes is a memory file of n sections dated in 2025 that each state
// the cache decision plainly, and one, dated 2026-03-01, that mentions it
// among other things: every plain one outranks it for a query about the
// decision, lexically and by vector.
func cacheNotes(n int) string {
	var b strings.Builder
	b.WriteString("# Memory — Ops (ops)\n\n")
	for i := range n {
		fmt.Fprintf(&b, "## 2025-%02d-%02d — cache %d\nWe decided the cache keeps %d entries.\n\n", 1+i%12, 1+i%28, i, 100+i)
		for j := range 3 {
			fmt.Fprintf(&b, "## 2025-%02d-%02d — billing %d\nReviewed the billing dashboard, invoice run %d is green.\n\n", 1+i%12, 1+i%28, i, 3*i+j)
		}
	}
	b.WriteString("## 2026-03-01 — standup\nAna demoed the export job, and we decided the cache keeps its size.\n\n")
	b.WriteString("## 2026-03-02 — standup\nPaired on the login page; the build is green again.\n\n")
	b.WriteString("## notes\nThe runbook is in the wiki.\n")
	return b.String()
}

// modelPalace mines content as agent ops's memory file with the
// installed MiniLM.
func modelPalace(t *testing.T, content string) *palace.Palace {
	t.Helper()
	m, err := benchModel()
	if err != nil {
		t.Skipf("MiniLM not installed in %s: %v", modelfetch.DefaultDir(), err)
	}
	h := hometest.New(t)
	p, _ := hometest.Palace(t, h, m, palace.Options{})
	hometest.WriteMemory(t, h, "ops", content)
	if _, err := p.Mine(context.Background(), h.AgentsDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// A time the query names fetches candidates from inside its window
// (cacheNotes: the section of 2026-03-01 is 161st on both sides for the
// query without the time, far below the 100 candidates each ranker
// returns), unless the time is wider than a few months; undated drawers
// are left alone.
func TestSearchFetchesFromTheTimeTheQueryNames(t *testing.T) {
	p := modelPalace(t, cacheNotes(160))
	ctx := context.Background()
	const about = "what did we decide about the cache"
	all, err := p.Search(ctx, palace.Query{Text: about, Results: palace.MaxResults})
	if err != nil {
		t.Fatal(err)
	}
	var target string
	for _, h := range all {
		if h.Date == "2026-03-01" {
			target = h.ID
			if h.LexicalRank <= 150 || h.VectorRank <= 150 {
				t.Fatalf("the section of 2026-03-01 ranks %d lexically and %d by vector, want both below 150", h.LexicalRank, h.VectorRank)
			}
		}
	}
	if target == "" {
		t.Fatal("the section of 2026-03-01 is not found at all")
	}
	at := func(hits []palace.Hit) int {
		for i, h := range hits {
			if h.ID == target {
				return i
			}
		}
		return -1
	}

	// The section is found with the default 5 results, and the date
	// stage lifts it first (in vector mode the other side's words do not
	// hold it back, it is among the five).
	t.Run("dated", func(t *testing.T) {
		for _, c := range []struct {
			text, asOf, mode string
			first            bool
		}{
			{about + " two weeks ago", "2026-03-15", palace.ModeHybrid, true},
			{about + " two weeks ago", "2026-03-15", palace.ModeLexical, true},
			{about + " two weeks ago", "2026-03-15", palace.ModeVector, false},
			{about + " last week", "2026-03-08", palace.ModeHybrid, true},
			{about + " in early March", "2026-03-15", palace.ModeHybrid, true},
		} {
			hits, err := p.Search(ctx, palace.Query{Text: c.text, AsOf: c.asOf, Mode: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			if i := at(hits); i < 0 || c.first && i != 0 {
				t.Errorf("%q (%s): hits %v, want the section of 2026-03-01 among them (first: %v)", c.text, c.mode, dates(hits), c.first)
			}
		}
	})

	// A time wider than a few months fetches nothing of its own: the
	// section is left where its words and vector put it.
	t.Run("wide", func(t *testing.T) {
		for _, text := range []string{about + " last year", about + " this year", about + " in the past six months"} {
			hits, err := p.Search(ctx, palace.Query{Text: text, AsOf: "2026-07-01"})
			if err != nil {
				t.Fatal(err)
			}
			if at(hits) >= 0 {
				t.Errorf("%q: hits %v: the section of 2026-03-01 was fetched", text, dates(hits))
			}
		}
	})

	// Undated drawers are never fetched from a window (a date filter
	// leaves them out) nor lifted: those the rankers find keep their
	// order and their score on each side.
	t.Run("undated", func(t *testing.T) {
		undated := func(asOf string) []palace.Hit {
			hits, err := p.Search(ctx, palace.Query{Text: "what did we decide about the runbook wiki cache two weeks ago", AsOf: asOf, Results: 20})
			if err != nil {
				t.Fatal(err)
			}
			if asOf == "2026-03-15" && at(hits) < 0 {
				t.Fatalf("as of %s: hits %v, want the section of 2026-03-01 fetched", asOf, dates(hits))
			}
			var out []palace.Hit
			for _, h := range hits {
				if h.Date == "" {
					out = append(out, h)
				}
			}
			return out
		}
		plain := undated("2024-03-15") // nothing dated then
		got := undated("2026-03-15")   // the section of 2026-03-01 fetched
		if len(plain) == 0 || len(got) != len(plain) {
			t.Fatalf("undated hits: %d with a window holding nothing, %d with one holding the section", len(plain), len(got))
		}
		for i := range got {
			if got[i].ID != plain[i].ID || got[i].LexicalScore != plain[i].LexicalScore || got[i].VectorScore != plain[i].VectorScore {
				t.Errorf("undated hit %d: %s (%v, %v), want %s (%v, %v)", i, got[i].ID, got[i].LexicalScore, got[i].VectorScore, plain[i].ID, plain[i].LexicalScore, plain[i].VectorScore)
			}
		}
	})
}

// yesterdayNotes has three sections dated 2026-05-19 that do not say
// when they were written, and 120 dated in 2025 (and one undated) that
// say "yesterday".
func yesterdayNotes() string {
	var b strings.Builder
	b.WriteString("# Memory — Ops (ops)\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "## 2025-%02d-%02d — deploy %d\nYesterday the deploy of service %d went fine.\n\n", 1+i%12, 1+i%28, i, i)
	}
	b.WriteString("## 2026-05-19 — login\nFixed the flaky login test.\n\n")
	b.WriteString("## 2026-05-19 — billing\nReviewed the billing patch with Ana.\n\n")
	b.WriteString("## 2026-05-19 — offsite\nPlanned the offsite agenda.\n\n")
	b.WriteString("## notes\nWhat I did yesterday is in the journal.\n")
	return b.String()
}

// A query that is only a time ("what did I do yesterday": stopwords
// aside, every word is the time's) is ranked inside its window, in every
// mode: the sections of that day, not the drawers that say "yesterday";
// as an ordinary query when the window holds nothing.
func TestSearchForATimeAloneReturnsThatTime(t *testing.T) {
	p := modelPalace(t, yesterdayNotes())
	ctx := context.Background()
	for _, mode := range []string{palace.ModeHybrid, palace.ModeLexical, palace.ModeVector} {
		for _, text := range []string{"what did I do yesterday", "yesterday?"} {
			hits, err := p.Search(ctx, palace.Query{Text: text, AsOf: "2026-05-20", Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			got := dates(hits)
			if len(got) != 3 || got[0] != "2026-05-19" || got[1] != "2026-05-19" || got[2] != "2026-05-19" {
				t.Errorf("%q (%s): hits %v, want the three sections of 2026-05-19", text, mode, got)
			}
		}
		hits, err := p.Search(ctx, palace.Query{Text: "what did I do yesterday", AsOf: "2026-07-01", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 5 {
			t.Errorf("(%s) as of a day after nothing: %d hits %v, want the 5 best for the words", mode, len(hits), dates(hits))
		}
		if mode == palace.ModeLexical {
			for _, h := range hits {
				if !strings.Contains(strings.ToLower(h.Text), "yesterday") {
					t.Errorf("(%s) as of a day after nothing: hit %q does not say yesterday", mode, h.Text)
				}
			}
		}
	}
}

// Which windows a search fetches candidates from: each time the query
// names, slack included, within the query's own dates, overlapping ones
// merged, none wider than a few months.
func TestDateScopes(t *testing.T) {
	ref := time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		text         string
		since, until string
		want         []string // since..until
		only         bool
	}{
		{text: "what did I do yesterday", want: []string{"2026-05-18..2026-05-20"}, only: true},
		{text: "the parser fix yesterday", want: []string{"2026-05-18..2026-05-20"}},
		{text: "what changed in May 2023", want: []string{"2023-04-28..2023-06-03"}},
		{text: "the deploy two months ago", want: []string{"2026-03-05..2026-04-04"}},
		{text: "the deploy in the past three months", want: []string{"2026-02-08..2026-06-01"}},
		{text: "between August 11 and 15", want: []string{"2025-08-10..2025-08-16"}, only: true},
		{text: "yesterday and the day before yesterday", want: []string{"2026-05-17..2026-05-20"}, only: true},
		{text: "on March 3 or on May 2", want: []string{"2026-03-02..2026-03-04", "2026-05-01..2026-05-03"}, only: true},
		{text: "the deploy yesterday", since: "2026-05-19", want: []string{"2026-05-19..2026-05-20"}},
		{text: "the deploy yesterday", until: "2026-05-01"},
		{text: "the deploy last year"},
		{text: "the deploy in 2025"},
		{text: "the deploy in the past six months"},
		{text: "the deploy"},
	} {
		q := palace.Query{Text: c.text, Filter: store.Filter{Wing: "ops", Since: c.since, Until: c.until}}
		scopes, only := palace.DateScopes(q, ref)
		var got []string
		for _, f := range scopes {
			if f.Wing != "ops" {
				t.Errorf("%q: scope %+v lost the wing", c.text, f)
			}
			got = append(got, f.Since+".."+f.Until)
		}
		if !slices.Equal(got, c.want) || only != (c.only && len(c.want) > 0) {
			t.Errorf("%q (since %q, until %q): scopes %v, only a time %v; want %v, %v", c.text, c.since, c.until, got, only, c.want, c.only)
		}
	}
}
