package palace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// TestWakeUpLeavesSupersededSectionsOut: a section marked "> superseded
// by:" is not a newest section of the digest, neither in its list nor in
// its text; the section that replaces it is, with the first line of its
// note (not its "> supersedes:" marker). A marker counts only at the start
// of a section, as search has it. The hive-wide line's newest section is
// the newest one not superseded; its count is every section of the file,
// as status counts them.
func TestWakeUpLeavesSupersededSectionsOut(t *testing.T) {
	const head = "# Memory — alice (alice)\n\n"
	superseded, _, err := memfile.Supersede([]byte(head+
		"## 2026-11-02 — deploy command\nDeploy the shop with make deploy.\n\n"+
		"## 2026-11-10 — logo\nThe shop logo is blue.\n"),
		"deploy command", "2026-12-01 — deploy command v2", "Deploy the shop with make release.")
	if err != nil {
		t.Fatal(err)
	}
	type item struct{ heading, first string }
	for _, c := range []struct {
		name     string
		file     string
		want     []item // newest first
		absent   []string
		newest   string
		sections int
	}{{
		name: "remember --supersedes",
		file: string(superseded),
		want: []item{
			{"2026-12-01 — deploy command v2", "Deploy the shop with make release."},
			{"2026-11-10 — logo", "The shop logo is blue."},
		},
		absent:   []string{"make deploy", "2026-11-02 — deploy command\n", "2026-11-02 — deploy command:"},
		newest:   "2026-12-01 — deploy command v2",
		sections: 3,
	}, {
		name: "a chain of replacements keeps the last",
		file: head +
			"## 2026-03-10 — timeout\n> superseded by: 2026-06-20 — timeout again\nThe payment timeout is 30 s.\n\n" +
			"## 2026-06-20 — timeout again\n> superseded by: 2026-09-01 — timeout now\n> supersedes: 2026-03-10 — timeout\nThe payment timeout is 45 s.\n\n" +
			"## 2026-09-01 — timeout now\n\n> Supersedes: 2026-06-20 — timeout again\n\nThe payment timeout is 60 s.\n",
		want:     []item{{"2026-09-01 — timeout now", "The payment timeout is 60 s."}},
		absent:   []string{"30 s", "45 s", "2026-03-10 — timeout\n", "timeout again:"},
		newest:   "2026-09-01 — timeout now",
		sections: 3,
	}, {
		name: "the newest section marked by hand",
		file: head +
			"## 2026-05-01 — editor\nWe use vim.\n\n" +
			"## 2026-05-02 — editor, wrong\n> SUPERSEDED BY: 2026-05-01 — editor\nWe use emacs.\n",
		want:     []item{{"2026-05-01 — editor", "We use vim."}},
		absent:   []string{"emacs", "editor, wrong"},
		newest:   "2026-05-01 — editor",
		sections: 2,
	}, {
		name: "a marker after the text is text",
		file: head +
			"## 2026-05-01 — quoting\nHow a correction looks:\n> superseded by: 2026-05-02 — x\n",
		want:     []item{{"2026-05-01 — quoting", "How a correction looks:"}},
		newest:   "2026-05-01 — quoting",
		sections: 1,
	}, {
		name:     "every section superseded",
		file:     head + "## 2026-05-01 — old\n> superseded by: 2026-05-02 — gone\nOutdated.\n",
		absent:   []string{"Outdated", "## Newest sections"},
		sections: 1,
	}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.write("alice", c.file)
			ctx := context.Background()
			d, err := f.p.WakeUp(ctx, "alice", 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []item
			for _, r := range d.Recent {
				got = append(got, item{r.Heading, r.FirstLine})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("recent = %q\nwant     %q", got, c.want)
			}
			for _, it := range c.want {
				if !strings.Contains(d.Text, "- "+it.heading+": "+it.first+"\n") {
					t.Errorf("text lacks %q:\n%s", it.heading, d.Text)
				}
			}
			for _, s := range c.absent {
				if strings.Contains(d.Text, s) {
					t.Errorf("text shows %q, which is superseded:\n%s", s, d.Text)
				}
			}
			if strings.Contains(d.Text, "> supersede") {
				t.Errorf("text shows a supersession marker as a first line:\n%s", d.Text)
			}
			h, err := f.p.WakeUp(ctx, "", 0)
			if err != nil || len(h.Agents) != 1 {
				t.Fatalf("hive wake-up = %+v, %v", h, err)
			}
			if a := h.Agents[0]; a.Newest != c.newest || a.Sections != c.sections {
				t.Errorf("hive line = %+v, want newest %q and %d sections", a, c.newest, c.sections)
			}
			if c.newest == "" && strings.Contains(h.Text, "newest:") {
				t.Errorf("hive text names a newest section though every one is superseded:\n%s", h.Text)
			}
		})
	}
}

// TestWakeUpNamesAnInvalidAgentID: a wing that is no agent id and no mined
// file's wing is refused as the bad id it is (bad input, as remember and
// pin refuse it), not as an unknown wing; a valid id no one has is still an
// unknown wing, and a mined wing that is no agent id still wakes up.
func TestWakeUpNamesAnInvalidAgentID(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — alice (alice)\n\n## 2026-11-20 — note\nbody\n")
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "plan.md"), []byte("# Plan\n\n## 2026-11-21 — roadmap\nship it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.p.Mine(ctx, notes, palace.MineOptions{Wing: "Team Plan"}); err != nil {
		t.Fatal(err)
	}
	for _, wing := range []string{"Bad..Id", "../alice", "Alice", "a/b", "-x"} {
		_, err := f.p.WakeUp(ctx, wing, 0)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("invalid agent id %q", wing)) ||
			!errors.Is(err, palace.ErrBadQuery) || errors.Is(err, palace.ErrUnknownWing) {
			t.Errorf("WakeUp(%q) = %v; want a bad query naming the invalid agent id", wing, err)
		}
	}
	if _, err := f.p.WakeUp(ctx, "nobody", 0); !errors.Is(err, palace.ErrUnknownWing) {
		t.Errorf("WakeUp(nobody) = %v; want unknown wing", err)
	}
	if d, err := f.p.WakeUp(ctx, "Team Plan", 0); err != nil || !strings.Contains(d.Text, "roadmap") {
		t.Errorf("WakeUp of the mined wing %q = %+v, %v", "Team Plan", d, err)
	}
}

// TestWakeUpSaysWhatALaterNoteRestates: an older pinned fact or section
// that a later one states again with another value is shown with a
// pointer to it, not as if it held; an unrelated one is not.
func TestWakeUpSaysWhatALaterNoteRestates(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory — alice (alice)\n\n"+
		"## 📌 Durable facts (pinned — never condensed)\n- The VPN is up\n- Releases ship on Tuesdays\n- The VPN is down\n"+
		"## 2026-11-02 — search flag\nThe feature flag for search is on\n\n"+
		"## 2026-11-10 — logo\nThe shop logo is blue.\n\n"+
		"## 2026-12-01 — search flag again\nThe feature flag for search is off\n")
	d, err := f.p.WakeUp(context.Background(), "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- The VPN is up (a later pinned fact restates this)\n",
		"- Releases ship on Tuesdays\n",
		"- The VPN is down\n",
		"- 2026-11-02 — search flag: The feature flag for search is on (restated in 2026-12-01 — search flag again)\n",
		"- 2026-11-10 — logo: The shop logo is blue.\n",
	} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("wake-up lacks %q:\n%s", want, d.Text)
		}
	}
	if fmt.Sprint(d.Restated) != "[The VPN is up]" {
		t.Errorf("restated pinned = %q", d.Restated)
	}
	for _, r := range d.Recent {
		if want := map[string]string{"2026-11-02 — search flag": "2026-12-01 — search flag again"}[r.Heading]; r.RestatedIn != want {
			t.Errorf("%s restated in %q, want %q", r.Heading, r.RestatedIn, want)
		}
	}
}
