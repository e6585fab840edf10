package app

import (
	"context"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
)

// opsPalace opens a fresh home with the real model and mines one agent's
// notes into it; env settings (HIVEMEM_*) apply as in any command.
func opsPalace(t testing.TB) *App {
	t.Helper()
	requireModel(t)
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	a := openAt(t, t.TempDir())
	memory := "# Memory — Ops (ops)\n\n" +
		"## 2026-10-01 — incident\nThe payments API returned 502s for forty minutes; the load balancer health check pointed at a removed pod. Ticket OPS-4471.\n\n" +
		"## 2026-10-02 — incidents review\nWent through last quarter's tickets and outages with the team; most pages were noise from flaky alerts.\n\n" +
		"## 2026-10-03 — hobby\nSpent the weekend practising taekwondo forms and sparring at the dojo.\n\n" +
		"## 2026-10-04 — travel\nBooked flights to Lisbon and a hotel near the conference venue for the March summit.\n\n" +
		"## 2026-10-05 — database\nMigrated the orders table to a partitioned layout; vacuum now finishes in minutes instead of hours.\n\n" +
		"## 2026-10-06 — team\nThe team lunch moved to Thursday; the team wiki page for the team rota needs an owner; team photo next week.\n\n" +
		"## 2026-10-07 — kids\nTook the kids to the museum; they loved the dinosaur bones. [shared an image: a photo of a red kayak on a river]\n\n" +
		"## 2026-10-08 — incident\nThe checkout API returned 503s for half an hour; the load balancer sent traffic to a drained node. Ticket OPS-4417.\n"
	hometest.WriteMemory(t, a.home, "ops", memory)
	if _, err := a.palace.Mine(context.Background(), a.home.AgentsDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestHybridRankingBehaviour pins what hybrid search must do on an agent's
// notes with the real model, independent of any benchmark's scores: find a
// section by meaning when no word is shared, keep an exact rare identifier
// first against sections that are merely about the same kind of thing, and
// prefer the section that matches both the words and the meaning of a
// query over one that repeats a single common query word. Each row fails
// with one of the two rankers alone (the comments above the rows say which;
// the other rows pin ordinary cases).
func TestHybridRankingBehaviour(t *testing.T) {
	a := opsPalace(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		query string
		want  string // heading of the expected first hit
	}{
		// Lexical alone finds nothing for these two.
		{"meaning without shared words", "which martial arts does the agent do", "2026-10-03 — hobby"},
		{"meaning without shared words 2", "trip abroad plans for a work event", "2026-10-04 — travel"},
		// Two incidents read alike; only the identifier tells them apart.
		{"exact rare identifier", "what was OPS-4471 about", "2026-10-01 — incident"},
		{"exact rare identifier 2", "what was OPS-4417 about", "2026-10-08 — incident"},
		{"words and meaning beat one repeated common word", "team outage review of tickets", "2026-10-02 — incidents review"},
		{"slow maintenance fixed", "postgres vacuum was slow", "2026-10-05 — database"},
		{"caption text is searchable", "kayak picture", "2026-10-07 — kids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := a.palace.Search(ctx, palace.Query{Text: tt.query, Mode: palace.ModeHybrid})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].Heading != tt.want {
				var got []string
				for _, h := range hits {
					got = append(got, h.Heading)
				}
				t.Fatalf("hybrid %q ranked %q, want %q first", tt.query, got, tt.want)
			}
		})
	}
}

// BenchmarkRepeatedQuery measures a warm hybrid search for a query asked
// before, with the query-embedding cache and without it (ns/op of each; the
// ratio is what the cache saves).
func BenchmarkRepeatedQuery(b *testing.B) {
	for _, bc := range []struct{ name, cache string }{{"cached", "1024"}, {"uncached", "0"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.Setenv("HIVEMEM_SEARCH_QUERY_CACHE", bc.cache)
			a := opsPalace(b)
			ctx := context.Background()
			q := palace.Query{Text: "which martial arts does the agent do", Mode: palace.ModeHybrid}
			for b.Loop() {
				if _, err := a.palace.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
