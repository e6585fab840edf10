package palace_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
)

// TestWakeUpHiveBudget: the hive-wide digest stays within its budget, its
// title included. A budget too small for the title gives an empty,
// truncated digest.
func TestWakeUpHiveBudget(t *testing.T) {
	f := newFixture(t, nil)
	for _, id := range []string{"alice", "bob", "carol"} {
		f.write(id, "# Memory — "+id+" ("+id+")\n\n## 2026-11-20 — fixed flaky login test\nThe session cookie expiry skew.\n")
	}
	ctx := context.Background()
	full, err := f.p.WakeUp(ctx, "", 800)
	if err != nil || full.Truncated || len(full.Agents) != 3 {
		t.Fatalf("hive wake-up = %+v, %v", full, err)
	}
	title := strings.SplitAfter(full.Text, "\n")[0]
	titleTokens := chunk.EstimateTokens(title)
	for budget := 1; budget <= full.Tokens; budget++ {
		d, err := f.p.WakeUp(ctx, "", budget)
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if d.Tokens > budget || d.Tokens != chunk.EstimateTokens(d.Text) || !strings.HasPrefix(full.Text, d.Text) {
			t.Fatalf("budget %d: %d tokens, text %q", budget, d.Tokens, d.Text)
		}
		if budget < titleTokens && (d.Text != "" || !d.Truncated || len(d.Agents) != 0) {
			t.Fatalf("budget %d under the title's %d tokens: %+v", budget, titleTokens, d)
		}
		if budget >= titleTokens && !strings.HasPrefix(d.Text, title) {
			t.Fatalf("budget %d: no title in %q", budget, d.Text)
		}
		if budget < full.Tokens && !d.Truncated {
			t.Fatalf("budget %d of %d needed: not marked truncated", budget, full.Tokens)
		}
	}
}

// TestWakeUpBudgetRange: a negative or too large budget is refused, for a
// wing and for the hive; 0 is the default.
func TestWakeUpBudgetRange(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — alice (alice)\n\n## 2026-11-20 — note\nbody\n")
	ctx := context.Background()
	for _, wing := range []string{"alice", ""} {
		for _, c := range []struct {
			budget int
			want   string
		}{{-1, "budget -1 is negative"}, {-5, "budget -5 is negative"}, {palace.MaxWakeUpBudget + 1, "too large"}} {
			if d, err := f.p.WakeUp(ctx, wing, c.budget); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("wing %q budget %d = %+v, %v; want an error with %q", wing, c.budget, d, err, c.want)
			}
		}
		d, err := f.p.WakeUp(ctx, wing, 0)
		if err != nil || d.Budget != palace.DefaultWakeUpBudget {
			t.Errorf("wing %q budget 0 = %+v, %v; want the default budget", wing, d, err)
		}
		if d, err := f.p.WakeUp(ctx, wing, palace.MaxWakeUpBudget); err != nil || d.Budget != palace.MaxWakeUpBudget {
			t.Errorf("wing %q budget %d = %+v, %v", wing, palace.MaxWakeUpBudget, d, err)
		}
	}
}

// TestWakeUpKeepsCondensedLayout: the condensed history in a wake-up keeps
// its lines and dates within the budget: every line shown is a whole line
// of the history (never two joined), the newest periods and the pointer to
// the archive stay, the oldest go first, and a roomy budget shows it all.
func TestWakeUpKeepsCondensedLayout(t *testing.T) {
	var hist []string
	for m := 1; m <= 12; m++ {
		hist = append(hist, fmt.Sprintf("- 2025-%02d-06 — work of month %d", m, m),
			fmt.Sprintf("  - fixed bug %d in cmd/tool%d/main.go with Dana", m, m),
			fmt.Sprintf("  - decided to ship release 1.%d on a Friday", m))
	}
	pointer := "Full text of evicted sections: hive/archive/alice/"
	condensed := strings.Join(hist, "\n") + "\n\n" + pointer
	f := newFixture(t, nil)
	f.write("alice", "# Memory — alice (alice)\n\n"+memfile.HeadingPinned+"\n- uses Go\n"+memfile.HeadingCondensed+"\n"+condensed+"\n"+
		memfile.HeadingRecent+"\n\n## 2026-01-02 — newest\nbody line\n")
	ctx := context.Background()
	all := map[string]bool{pointer: true}
	for _, l := range hist {
		all[l] = true
	}
	for _, budget := range []int{120, 200, 400} {
		d, err := f.p.WakeUp(ctx, "alice", budget)
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens > budget {
			t.Errorf("budget %d: %d tokens", budget, d.Tokens)
		}
		lines := strings.Split(d.Condensed, "\n")
		if len(lines) < 3 {
			t.Fatalf("budget %d: condensed %q", budget, d.Condensed)
		}
		for _, l := range lines {
			if !all[l] {
				t.Errorf("budget %d: line %q is not a line of the history (joined or cut)", budget, l)
			}
		}
		if lines[len(lines)-1] != pointer || !strings.Contains(d.Condensed, "- 2025-12-06 — work of month 12") {
			t.Errorf("budget %d: the newest period or the pointer is missing:\n%s", budget, d.Condensed)
		}
		if strings.Contains(d.Condensed, "month 1\n") || !d.Truncated {
			t.Errorf("budget %d: the oldest period was kept before newer ones, or truncation not marked:\n%s", budget, d.Condensed)
		}
		if !strings.Contains(d.Text, d.Condensed+"\n") {
			t.Errorf("budget %d: the digest text does not hold the condensed lines as they are:\n%s", budget, d.Text)
		}
	}
	d, err := f.p.WakeUp(ctx, "alice", 2000)
	if err != nil || d.Truncated || d.Condensed != strings.Join(append(hist, pointer), "\n") {
		t.Errorf("roomy wake-up = %q, truncated %v, %v", d.Condensed, d.Truncated, err)
	}
}
