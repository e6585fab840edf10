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

// TestMineSkipsNonUTF8Path: a markdown file whose name is not valid UTF-8
// (from an old Latin-1 system, say) is skipped with a reason on every
// backend (PostgreSQL could not even look its path up), and the rest of
// the directory is mined.
func TestMineSkipsNonUTF8Path(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — Alice\n\n## 2026-11-20 — login\nThe login test was flaky.\n")
	bad := filepath.Join(f.h.AgentsDir(), "alice", "notes-\xe9t\xe9.md")
	if err := os.WriteFile(bad, []byte("# Notes\n\n## 2026-11-21 — summer\nsummerwords here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := f.mine()
	if rep.Files != 1 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != bad || !strings.Contains(rep.Skipped[0].Reason, "not valid UTF-8") {
		t.Fatalf("report %+v: want alice's memory mined and the Latin-1 name skipped as not valid UTF-8", rep)
	}
	if hits := f.search("login", store.Filter{}); len(hits) != 1 {
		t.Errorf("login: %d hits, want 1", len(hits))
	}
	// Mining the file itself says the same.
	rep, err := f.p.Mine(context.Background(), bad, palace.MineOptions{})
	if err != nil || len(rep.Skipped) != 1 || rep.Files != 0 {
		t.Errorf("mine the file itself: %+v, %v; want it skipped", rep, err)
	}
}

// TestSearchRefusesNonTextFilters: a wing or room that is not valid UTF-8
// or holds a NUL byte can name no drawer (and PostgreSQL cannot compare
// it): Search refuses it, naming the filter.
func TestSearchRefusesNonTextFilters(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — Alice\n\n## 2026-11-20 — login\nThe login test was flaky.\n")
	f.mine()
	for _, c := range []struct {
		flt  store.Filter
		want string
	}{
		{store.Filter{Wing: "alice\x00"}, "wing contains a NUL byte"},
		{store.Filter{Wing: "al\xffice"}, "wing is not valid UTF-8"},
		{store.Filter{Room: "\x00"}, "room contains a NUL byte"},
		{store.Filter{Room: "rec\xc3"}, "room is not valid UTF-8"},
		{store.Filter{Agent: "alice\x00"}, "invalid agent id"},
		{store.Filter{Agent: "\xe9"}, "invalid agent id"},
	} {
		_, err := f.p.Search(context.Background(), palace.Query{Text: "login", Filter: c.flt})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("filter %+v: %v, want an error with %q", c.flt, err, c.want)
		} else if !errors.Is(err, palace.ErrBadQuery) {
			t.Errorf("filter %+v: %v is not a palace.ErrBadQuery", c.flt, err)
		}
	}
}
