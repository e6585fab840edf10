package palace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// TestSearchRefusesBadInput: what every entry point (CLI, HTTP API, MCP)
// relies on palace.Search to refuse, each with an error naming the problem.
func TestSearchRefusesBadInput(t *testing.T) {
	f := newFixture(t, nil) // lexical-only
	f.write("alice", "# Memory — Alice\n\n## 2026-11-20 — login\nThe login test was flaky.\n")
	f.mine()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    palace.Query
		want string
		is   error
	}{
		{"since after until", palace.Query{Text: "login", Filter: store.Filter{Since: "2026-11-30", Until: "2026-11-01"}}, "since 2026-11-30 is after until 2026-11-01", nil},
		{"as-of not a date", palace.Query{Text: "login", AsOf: "yesterday"}, `as of date "yesterday" is not a day (want YYYY-MM-DD)`, palace.ErrBadQuery},
		{"as-of no such day", palace.Query{Text: "login", AsOf: "2026-02-30"}, `as of date "2026-02-30" is not a day (want YYYY-MM-DD)`, palace.ErrBadQuery},
		{"as-of month 13", palace.Query{Text: "login", AsOf: "2023-13-01"}, `as of date "2023-13-01" is not a day (want YYYY-MM-DD)`, palace.ErrBadQuery},
		{"since month 13", palace.Query{Text: "login", Filter: store.Filter{Since: "2023-13-01"}}, `since date "2023-13-01" is not a day (want YYYY-MM-DD)`, palace.ErrBadQuery},
		{"until with a time", palace.Query{Text: "login", Filter: store.Filter{Until: "2023-01-01T00:00:00Z"}}, `until date "2023-01-01T00:00:00Z" is not a day (want YYYY-MM-DD)`, palace.ErrBadQuery},
		{"agent traversal", palace.Query{Text: "login", Filter: store.Filter{Agent: "../alice"}}, `invalid agent id "../alice"`, nil},
		{"agent upper", palace.Query{Text: "login", Filter: store.Filter{Agent: "Alice"}}, `invalid agent id "Alice"`, nil},
		{"results negative", palace.Query{Text: "login", Results: -1}, "results must be between 1 and 1000, got -1", nil},
		{"no words", palace.Query{Text: "*()"}, "query has no words to search for", palace.ErrNoWords},
		{"no words lexical", palace.Query{Text: "🎉", Mode: palace.ModeLexical}, "query has no words to search for", palace.ErrNoWords},
		{"unknown wing", palace.Query{Text: "login", Filter: store.Filter{Wing: "alise"}}, `unknown wing "alise"`, palace.ErrUnknownWing},
	} {
		t.Run(c.name, func(t *testing.T) {
			hits, err := f.p.Search(ctx, c.q)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (hits %v), want one containing %q", err, hits, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err %v is not %v", err, c.is)
			}
		})
	}
	// The range one day long, a known wing whose filter matches nothing, and
	// an agent with a memory file not mined yet are empty successes.
	for _, flt := range []store.Filter{
		{Since: "2026-11-20", Until: "2026-11-20"},
		{Wing: "alice", Room: "pinned"},
		{Wing: "alice", Since: "2027-01-01"},
	} {
		if _, err := f.p.Search(ctx, palace.Query{Text: "login", Filter: flt}); err != nil {
			t.Errorf("filter %+v: %v", flt, err)
		}
	}
	f.write("bob", "# Memory — Bob\n")
	if hits, err := f.p.Search(ctx, palace.Query{Text: "login", Filter: store.Filter{Wing: "bob"}}); err != nil || len(hits) != 0 {
		t.Errorf("wing of an agent not mined yet: %v %v", hits, err)
	}
}

// TestSearchNoWordsWithEmbedder: with an embedder the vector side answers
// a query without words, so hybrid and vector search take it; lexical
// search still refuses it.
func TestSearchNoWordsWithEmbedder(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	f.write("alice", "# Memory — Alice\n\n## 2026-11-20 — login\nThe login test was flaky.\n")
	f.mine()
	ctx := context.Background()
	for _, mode := range []string{"", palace.ModeHybrid, palace.ModeVector} {
		if _, err := f.p.Search(ctx, palace.Query{Text: "🎉", Mode: mode}); err != nil {
			t.Errorf("mode %q: %v", mode, err)
		}
	}
	if _, err := f.p.Search(ctx, palace.Query{Text: "🎉", Mode: palace.ModeLexical}); !errors.Is(err, palace.ErrNoWords) {
		t.Errorf("lexical: err = %v, want ErrNoWords", err)
	}
}

// TestSearchWingOfMinedFile: a wing given to files mined from outside the
// hive is known to search, though no memory.md has it.
func TestSearchWingOfMinedFile(t *testing.T) {
	f := newFixture(t, nil)
	dir := filepath.Join(f.h.Root, "ext")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n\n## deploys\nDeploys run on Tuesdays.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Mine(context.Background(), dir, palace.MineOptions{Wing: "ext"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Search(context.Background(), palace.Query{Text: "nothing like it", Filter: store.Filter{Wing: "ext"}}); err != nil {
		t.Fatalf("known wing without a hit: %v", err)
	}
}

// TestMineRefusesBadInput: an empty path and an agent that is not an
// agent id are refused before anything is mined.
func TestMineRefusesBadInput(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — Alice\n\n## 2026-11-20 — login\nThe login test was flaky.\n")
	ctx := context.Background()
	if _, err := f.p.Mine(ctx, "", palace.MineOptions{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty path: err = %v", err)
	}
	for _, agent := range []string{"../x", "Alice", "a/b", "."} {
		if _, err := f.p.Mine(ctx, f.h.AgentsDir(), palace.MineOptions{Agent: agent}); err == nil || !strings.Contains(err.Error(), "invalid agent id") {
			t.Errorf("agent %q: err = %v", agent, err)
		}
	}
	if st, err := f.st.Stats(ctx); err != nil || st.Drawers != 0 {
		t.Errorf("a refused mine indexed something: %+v %v", st, err)
	}
}
