package palace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/wiring"
)

// changingFacts is an agent's notes in which two facts change (the
// production database version, the payment timeout), among notes that
// share words with them without restating them, a sibling subject (the
// staging database) and two unrelated sections of one day.
const changingFacts = "# Memory — Ops (ops)\n\n" +
	"## 2026-03-02 — database\n- The production database version is PostgreSQL 14.\n\n" +
	"## 2026-03-10 — payments\n- The payment request timeout is 30 seconds.\n\n" +
	"## 2026-04-01 — staging\n- The staging database version is PostgreSQL 15.\n\n" +
	"## 2026-04-15 — billing\n- Reviewed the billing dashboard with Ana; the database graphs need a legend.\n\n" +
	"## 2026-05-10 — standup notes\n- Paired with Ana on the export job.\n- Upgraded the production database version to PostgreSQL 16 after the load test.\n- Lunch moves to Thursday.\n\n" +
	"## 2026-06-20 — payments again\n- Raised the payment request timeout from 30 to 45 seconds: the card network is slow at peak.\n\n" +
	"## 2026-07-07 — deploy\n- Deploys go out with make deploy; the release checklist is in the wiki.\n\n" +
	"## 2026-07-07 — deploy review\n- Reviewed the deploy dashboards with the team: the deploy alerts are too noisy.\n"

// opsPalace mines changingFacts into a fresh home, with the real model
// when it is installed (then vectors take part), else lexical-only.
func changingFactsPalace(t *testing.T, withModel bool) *palace.Palace {
	t.Helper()
	if withModel {
		if !wiring.ModelInstalled(modelfetch.DefaultDir()) {
			t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", modelfetch.DefaultDir())
		}
		t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	} else {
		t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	}
	ctx := context.Background()
	h, cfg, err := wiring.LoadHome(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := wiring.OpenBench(ctx, h, cfg, wiring.Options{}) // the app's own palace
	if err != nil {
		t.Fatal(err)
	}
	a := b.App
	t.Cleanup(func() { a.Close() })
	if got := b.Palace.Embedder() != nil; got != withModel {
		t.Fatalf("embedder present %v, want %v", got, withModel)
	}
	dir := filepath.Join(a.Home().AgentsDir(), "ops")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.md"), []byte(changingFacts), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mine(ctx, app.MineRequest{Path: a.Home().AgentsDir()}); err != nil {
		t.Fatal(err)
	}
	return b.Palace
}

// TestSupersessionOrdering pins what supersession does and where it stops:
// the newest statement of a subject ranks first and the older one is
// marked superseded by it; a question about the past, by a date gone by
// or by "first", gets the old statement first, and one naming a time to
// come, or a number that is no date, the new one; a sibling subject
// (staging) is not superseded by the production one; two unrelated
// sections of the same day mark nothing; and a query that matches no
// changed fact ranks as fusion did.
func TestSupersessionOrdering(t *testing.T) {
	for _, model := range []bool{false, true} {
		name := "lexical-only"
		if model {
			name = "minilm"
		}
		t.Run(name, func(t *testing.T) {
			p := changingFactsPalace(t, model)
			type row struct {
				query string
				asOf  string // the day it is asked ("": today)
				// vectors: the row holds only with the model; without it
				// the staging sibling, worded almost as the old statement,
				// is as like it as the new one, so nothing stands out.
				vectors bool
				first   string // heading of the top hit
				// superseded: heading → heading of the hit it is
				// superseded by ("" for a hit that must not be marked).
				superseded map[string]string
			}
			tests := []row{
				{"What is the production database version?", "", true, "2026-05-10 — standup notes",
					map[string]string{"2026-03-02 — database": "2026-05-10 — standup notes", "2026-04-01 — staging": "", "2026-05-10 — standup notes": ""}},
				{"payment request timeout", "", false, "2026-06-20 — payments again",
					map[string]string{"2026-03-10 — payments": "2026-06-20 — payments again", "2026-06-20 — payments again": ""}},
				{"What was the payment request timeout on 2026-03-10?", "", false, "2026-03-10 — payments", nil},
				// A word alone ("first", "was", "did", "before", "until")
				// does not make a question one about the past.
				{"Which payment request timeout did we have first?", "", false, "2026-06-20 — payments again",
					map[string]string{"2026-03-10 — payments": "2026-06-20 — payments again"}},
				{"What was the payment request timeout before?", "", false, "2026-06-20 — payments again",
					map[string]string{"2026-03-10 — payments": "2026-06-20 — payments again"}},
				{"Until when do we wait: what is the payment request timeout?", "", false, "2026-06-20 — payments again",
					map[string]string{"2026-03-10 — payments": "2026-06-20 — payments again"}},
				// As of a day, the fact current then ranks first, unmarked.
				{"payment request timeout", "2026-04-01", false, "2026-03-10 — payments",
					map[string]string{"2026-03-10 — payments": ""}},
				// A past day, however written, asks about then.
				{"The payment request timeout as of the 10th of March?", "2026-12-01", false, "2026-03-10 — payments", nil},
				{"What is the staging database version?", "", false, "2026-04-01 — staging",
					map[string]string{"2026-04-01 — staging": ""}},
				{"deploy dashboards and alerts", "", false, "2026-07-07 — deploy review",
					map[string]string{"2026-07-07 — deploy review": "", "2026-07-07 — deploy": ""}},
				{"billing dashboard legend", "", false, "2026-04-15 — billing",
					map[string]string{"2026-04-15 — billing": ""}},
			}
			// A time the question names makes it about the past only when
			// it is over before the day it is asked: a date or a year
			// ahead, next week, today's date, or a number that is no year
			// (when.Find reads none of them as a past time) asks what is
			// current.
			for _, q := range []string{
				"What is the payment request timeout for 2027-01-15?",
				"What is the payment request timeout in 2030?",
				"What is the payment request timeout next week?",
				"What is the payment request timeout today, December 1?",
				"What is the payment request timeout for 1999 requests?",
				"What is the payment request timeout for pre-1920 requests?",
			} {
				tests = append(tests, row{query: q, asOf: "2026-12-01", first: "2026-06-20 — payments again",
					superseded: map[string]string{"2026-03-10 — payments": "2026-06-20 — payments again"}})
			}
			for _, tc := range tests {
				if tc.vectors && !model {
					continue
				}
				hits, err := p.Search(context.Background(), palace.Query{Text: tc.query, AsOf: tc.asOf, Results: 8, Filter: store.Filter{Wing: "ops"}})
				if err != nil {
					t.Fatalf("%q: %v", tc.query, err)
				}
				if len(hits) == 0 || hits[0].Heading != tc.first {
					t.Errorf("%q: first hit %q, want %q\n%s", tc.query, firstHeading(hits), tc.first, describe(hits))
					continue
				}
				byID := map[string]palace.Hit{}
				for _, h := range hits {
					byID[h.ID] = h
				}
				for heading, by := range tc.superseded {
					h, ok := hitByHeading(hits, heading)
					if !ok {
						t.Errorf("%q: no hit %q\n%s", tc.query, heading, describe(hits))
						continue
					}
					got := byID[h.SupersededBy].Heading
					if got != by || (by != "" && h.SupersededReason != palace.SupersededNewer) {
						t.Errorf("%q: %q superseded by %q (%s), want %q\n%s", tc.query, heading, got, h.SupersededReason, by, describe(hits))
					}
				}
			}
		})
	}
}

func firstHeading(hits []palace.Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Heading
}

func hitByHeading(hits []palace.Hit, heading string) (palace.Hit, bool) {
	for _, h := range hits {
		if h.Heading == heading {
			return h, true
		}
	}
	return palace.Hit{}, false
}

func describe(hits []palace.Hit) string {
	var b strings.Builder
	for i, h := range hits {
		b.WriteString("  ")
		b.WriteString(string(rune('1' + i)))
		b.WriteString(". " + h.Heading)
		if h.SupersededBy != "" {
			b.WriteString("  [superseded by " + h.SupersededBy + "]")
		}
		b.WriteString("\n")
	}
	return b.String()
}
