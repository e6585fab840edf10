package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/mdfence"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/extractive")

// splitSections cuts a memory excerpt into its "## " sections, ignoring
// headings inside code fences, the way the reflector hands them over.
func splitSections(t *testing.T, text string) []string {
	t.Helper()
	var secs []string
	var cur []string
	var fs mdfence.State
	for _, line := range strings.Split(text, "\n") {
		if fs.Step(line); !fs.Open() && strings.HasPrefix(line, "## ") && len(cur) > 0 {
			secs = append(secs, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		secs = append(secs, strings.Join(cur, "\n"))
	}
	return secs
}

func readEvicted(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "extractive", "evicted.md"))
	if err != nil {
		t.Fatal(err)
	}
	secs := splitSections(t, string(data))
	if len(secs) != 4 {
		t.Fatalf("testdata has %d sections, want 4", len(secs))
	}
	return secs
}

// budgetWords counts the words of condensed text the way the budget does:
// bullet markers are not words.
func budgetWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if w != "-" {
			n++
		}
	}
	return n
}

// TestExtractiveGolden pins the output for a realistic excerpt so changes to
// the heuristics show up as a reviewable diff (go test -update).
func TestExtractiveGolden(t *testing.T) {
	tests := []struct {
		name string
		req  Request
	}{
		{"full", Request{
			Agent:        "alice",
			OldCondensed: "- 2026-08-20 — bootstrap\n  - repo created at github.com/hivemem/hivemem\n- 2026-08-28 — chose Go 1.26 for the rewrite",
			Evicted:      readEvicted(t),
			Pinned:       []string{"- 📌 Always run `go test ./...` before pushing."},
		}},
		{"tight", Request{Agent: "alice", Evicted: readEvicted(t), WordBudget: 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Extractive{}.Summarize(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString(res.Condensed)
			b.WriteString("\n-- hoist --\n")
			for _, h := range res.Hoist {
				b.WriteString(h + "\n")
			}
			path := filepath.Join("testdata", "extractive", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("output differs from %s:\n--- got ---\n%s\n--- want ---\n%s", path, b.String(), want)
			}
		})
	}
}

func TestExtractiveKeepsFacts(t *testing.T) {
	evicted := readEvicted(t)
	res, err := Extractive{}.Summarize(context.Background(), Request{
		Agent:   "alice",
		Evicted: evicted,
		Pinned:  []string{"📌 always run `go test ./...` before pushing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	keep := []string{
		"2026-09-02 — set up the palace", "2026-09-05 — embedder port", "2026-09-09 — standup", "2026-09-12 — login test flake",
		"palace/palace.db", "Decided to keep markdown", "Priya", "MiniLM", "`$ go test -run TestGolden ./internal/embed`",
		"0.9999", "VZEROUPPER", "auth/login_test.go", "t.TempDir()",
	}
	for _, s := range keep {
		if !strings.Contains(res.Condensed, s) {
			t.Errorf("condensed lost %q:\n%s", s, res.Condensed)
		}
	}
	drop := []string{"(none yet)", "this is not a heading", "it felt good"}
	for _, s := range drop {
		if strings.Contains(res.Condensed, s) {
			t.Errorf("condensed kept noise %q:\n%s", s, res.Condensed)
		}
	}
	wantHoist := []string{
		"Decided to keep markdown as the source of truth; the index is disposable.",
		"convention: never share temp dirs between tests",
		"never push to main directly",
	}
	slices.Sort(wantHoist)
	got := slices.Clone(res.Hoist)
	slices.Sort(got)
	if !slices.Equal(got, wantHoist) {
		t.Errorf("hoist = %q, want %q (the pinned fact is already pinned; \"not decided\" is not a decision)", res.Hoist, wantHoist)
	}
}

// TestExtractiveBudget checks the budget rules: never over budget; a line
// for every section while the budget allows it, and when it does not, the
// oldest days are merged into a line for their month before any period
// loses its line; the newest sections always keep their own line; facts
// before prose.
func TestExtractiveBudget(t *testing.T) {
	var evicted []string
	for i := 1; i <= 10; i++ {
		evicted = append(evicted, fmt.Sprintf("## 2026-10-%02d — day %d\n- Decided item %d-a at /srv/app%d/config.toml\n- Deployed build %d-b to Staging with Kim\n- prose line that carries nothing\n", i, i, i, i, i))
	}
	old := "- 2026-09-29 — older work\n  - wrote 12 tests\n- 2026-09-30 — earlier work\n  - migrated 3 tables to Postgres"
	tests := []struct {
		name     string
		budget   int
		old      string
		ownLine  []int    // day numbers that keep their own line
		periods  []string // period lines that must be present (a day or a merged month)
		wantText []string
	}{
		{name: "roomy", budget: 600, old: old, ownLine: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			periods: []string{"- 2026-09-29 — older work", "- 2026-09-30 — earlier work"}, wantText: []string{"migrated 3 tables", "Decided item 1-a"}},
		{name: "days merge into their month", budget: 150, old: old, ownLine: []int{5, 6, 7, 8, 9, 10},
			periods: []string{"- 2026-09 (2 sections, 2026-09-29 to 2026-09-30)", "- 2026-10 (4 sections, 2026-10-01 to 2026-10-04)"}},
		{name: "then months into their year", budget: 60, old: old, ownLine: []int{7, 8, 9, 10},
			periods: []string{"- 2026 (8 sections, 2026-09-29 to 2026-10-06)"}},
		{name: "tight", budget: 30, ownLine: []int{10}, periods: []string{"- 2026-10 ("}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Extractive{}.Summarize(context.Background(), Request{Evicted: evicted, OldCondensed: tt.old, WordBudget: tt.budget})
			if err != nil {
				t.Fatal(err)
			}
			if n := budgetWords(res.Condensed); n > tt.budget {
				t.Errorf("condensed has %d words, budget %d:\n%s", n, tt.budget, res.Condensed)
			}
			for _, d := range tt.ownLine {
				if !strings.Contains(res.Condensed+"\n", fmt.Sprintf("— day %d\n", d)) {
					t.Errorf("section day %d lost its line:\n%s", d, res.Condensed)
				}
			}
			for _, p := range tt.periods {
				if !strings.Contains(res.Condensed, p) {
					t.Errorf("period line %q missing:\n%s", p, res.Condensed)
				}
			}
			for _, w := range tt.wantText {
				if !strings.Contains(res.Condensed, w) {
					t.Errorf("fact %q missing:\n%s", w, res.Condensed)
				}
			}
			if strings.Contains(res.Condensed, "prose line") && tt.budget <= 60 {
				t.Errorf("a line without facts was kept under a tight budget:\n%s", res.Condensed)
			}
			if _, err := Parse(contractJSON(t, res)); err != nil {
				t.Errorf("result breaks the contract: %v", err)
			}
		})
	}
}

// TestExtractiveRollingKeepsEveryPeriod: ten successive condensations,
// each summarising the previous condensed history with a new month of
// evicted sections under the same budget, keep a line for every month seen
// so far, stay within the budget, and keep the newest month's own facts.
func TestExtractiveRollingKeepsEveryPeriod(t *testing.T) {
	for _, budget := range []int{150, 600} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			condensed := ""
			for month := 1; month <= 10; month++ {
				var evicted []string
				for day := 1; day <= 8; day++ {
					evicted = append(evicted, fmt.Sprintf("## 2026-%02d-%02d — work on part %d.%d\n"+
						"Met with Dana about the Orion%d release.\nFixed the crash in cmd/tool%d/main.go after 3 retries.\n"+
						"It rained and we had coffee.\n", month, day*3, month, day, month*10+day, month*10+day))
				}
				res, err := Extractive{}.Summarize(context.Background(), Request{OldCondensed: condensed, Evicted: evicted, WordBudget: budget})
				if err != nil {
					t.Fatalf("condensation %d: %v", month, err)
				}
				condensed = res.Condensed
				if n := budgetWords(condensed); n > budget {
					t.Fatalf("condensation %d: %d words over budget %d:\n%s", month, n, budget, condensed)
				}
				for m := 1; m <= month; m++ {
					if !hasPeriodLine(condensed, fmt.Sprintf("2026-%02d", m)) {
						t.Fatalf("condensation %d: month 2026-%02d has no line:\n%s", month, m, condensed)
					}
				}
				if !strings.Contains(condensed, fmt.Sprintf("Orion%d", month*10+8)) && !strings.Contains(condensed, fmt.Sprintf("tool%d", month*10+8)) {
					t.Fatalf("condensation %d: the newest section's facts are gone:\n%s", month, condensed)
				}
			}
			t.Logf("after ten condensations (budget %d):\n%s", budget, condensed)
		})
	}
}

// hasPeriodLine reports whether condensed text has a top-level line for a
// period that starts with prefix (a day of it, or the month, or a merged
// range that covers it).
func hasPeriodLine(text, month string) bool {
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "- ") {
			continue
		}
		if strings.HasPrefix(l, "- "+month) {
			return true
		}
		var lo, hi string
		if i := strings.Index(l, "sections, "); i >= 0 {
			if _, err := fmt.Sscanf(strings.TrimSuffix(l[i+len("sections, "):], ")"), "%s to %s", &lo, &hi); err == nil {
				hi = strings.TrimSuffix(hi, ")")
				if lo[:7] <= month && month <= hi[:7] {
					return true
				}
			}
		}
	}
	return false
}

// TestTruncateWordsBytes: a token costs a word per wordBytes bytes and one
// longer than maxTokenBytes is cut, so the word budget bounds bytes too.
// Ordinary text is counted and kept as before.
func TestTruncateWordsBytes(t *testing.T) {
	blob := strings.Repeat("QUJDRA", 1000)
	cjk := strings.Repeat("決定", 100) // 600 bytes, no spaces
	tests := []struct {
		name  string
		s     string
		n     int
		words int // countWords(s)
		want  string
	}{
		{name: "prose unchanged", s: "fixed  the build in /src/a.go", n: 40, words: 5, want: "fixed  the build in /src/a.go"},
		{name: "prose cut at n words", s: "a b c d e", n: 3, words: 5, want: "a b c…"},
		{name: "17 bytes is two words", s: "internationalized", n: 1, words: 2, want: "international…"},
		{name: "long token cut in place", s: "see " + blob + " later", n: 40, words: 1 + 375 + 1, want: "see " + blob[:maxTokenBytes-len("…")] + "… later"},
		{name: "long token cut at the budget", s: "see " + blob, n: 3, words: 376, want: "see " + blob[:2*wordBytes-len("…")] + "…"},
		{name: "cut never splits a character", s: cjk, n: 2, words: 38, want: strings.Repeat("決定", 4) + "決…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countWords(tt.s); got != tt.words {
				t.Errorf("countWords = %d, want %d", got, tt.words)
			}
			got := truncateWords(tt.s, tt.n)
			if got != tt.want {
				t.Errorf("truncateWords(%d) = %q, want %q", tt.n, got, tt.want)
			}
			if w := countWords(got); got != tt.s && w > tt.n {
				t.Errorf("truncateWords(%d) = %q, %d words", tt.n, got, w)
			}
		})
	}
}

// TestExtractiveOldCondensed checks that the old text loses its oldest lines
// first and keeps its newest, within its share of the budget.
func TestExtractiveOldCondensed(t *testing.T) {
	var old []string
	for i := 1; i <= 40; i++ {
		old = append(old, fmt.Sprintf("- 2026-07-%02d — entry %d with five words", i%28+1, i))
	}
	res, err := Extractive{}.Summarize(context.Background(), Request{
		OldCondensed: strings.Join(old, "\n"),
		Evicted:      []string{"## 2026-08-01 — new\n- fixed bug 7 in cmd/x.go\n"},
		WordBudget:   100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Condensed, "entry 40 ") || strings.Contains(res.Condensed, "entry 1 ") {
		t.Errorf("old condensed did not keep its newest lines:\n%s", res.Condensed)
	}
	if !strings.Contains(res.Condensed, "fixed bug 7 in cmd/x.go") {
		t.Errorf("evicted detail lost:\n%s", res.Condensed)
	}
	if n := budgetWords(res.Condensed); n > 100 {
		t.Errorf("%d words over budget 100", n)
	}
	// Old text only (nothing evicted) is still a valid condensation.
	res, err = Extractive{}.Summarize(context.Background(), Request{OldCondensed: strings.Join(old, "\n"), WordBudget: 20})
	if err != nil || !strings.Contains(res.Condensed, "entry 40 ") {
		t.Errorf("old-only condensation = %q, %v", res.Condensed, err)
	}
}

func TestExtractiveStructureSafe(t *testing.T) {
	evicted := []string{
		"## 2026-10-01 — code\n```go\n## not a heading\nfunc main() {} // see cmd/main.go\n```\n~~~\n# also code 42\n~~~\n### Sub heading with Alice\n- 📌 pinned fact 1\n",
		"## 2026-10-02 — no fence close\n```sh\n$ make release VERSION=1.2.3\n## Recent\n",
	}
	res, err := Extractive{}.Summarize(context.Background(), Request{
		OldCondensed: "```\n## inside old fence\n```\n- kept 2026 line",
		Evicted:      evicted,
	})
	if err != nil {
		t.Fatal(err)
	}
	var fs mdfence.State
	for _, line := range strings.Split(res.Condensed, "\n") {
		if fs.Step(line) {
			continue
		}
		if !fs.Open() && (strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## ")) {
			t.Errorf("condensed has a heading line outside a fence: %q", line)
		}
	}
	if fs.Open() {
		t.Errorf("condensed leaves a fence open:\n%s", res.Condensed)
	}
	for _, s := range []string{"`$ make release VERSION=1.2.3`", "`func main() {} // see cmd/main.go`", "Sub heading with Alice"} {
		if !strings.Contains(res.Condensed, s) {
			t.Errorf("condensed lost %q:\n%s", s, res.Condensed)
		}
	}
	if strings.Contains(res.Condensed, "pinned fact 1") {
		t.Errorf("a 📌 line was repeated in condensed instead of only hoisted:\n%s", res.Condensed)
	}
	if !slices.Equal(res.Hoist, []string{"pinned fact 1"}) {
		t.Errorf("hoist = %q", res.Hoist)
	}
}

func TestExtractiveHoist(t *testing.T) {
	tests := []struct {
		name    string
		evicted string
		pinned  []string
		want    []string
	}{
		{"pin marker", "## d\n- 📌 Use port 8421 for the API\n", nil, []string{"Use port 8421 for the API"}},
		{"already pinned, other spelling", "## d\n📌 use port 8421 for the API.\n", []string{"- 📌 Use  port 8421 for the API"}, nil},
		{"rule words", "## d\n- We always tag releases as vX.Y.Z\n- Decided: SQLite is the default backend\n", nil,
			[]string{"We always tag releases as vX.Y.Z", "Decided: SQLite is the default backend"}},
		{"not decisions", "## d\n- haven't decided on the logo yet\n- should we never retry?\n- not always reproducible\n", nil, nil},
		{"too long to be a fact", "## d\n- " + strings.Repeat("word ", 40) + "always\n", nil, nil},
		{"inside fence ignored", "## d\n```\n# always do this in code\n📌 nope\n```\n", nil, nil},
		{"headings ignored", "## We always ship on Fridays\n### never again\n", nil, nil},
		{"duplicates once", "## d\n- 📌 one fact\n- 📌 One fact.\n", nil, []string{"one fact"}},
		// A rule a later line or a pinned fact changes is outdated: not
		// hoisted as if it held (before, it was).
		{"changed later", "## d\n- Decided: deploys must never run on Fridays\n## e\n- Deploys can run on Fridays now\n", nil, nil},
		{"changed by a pinned fact", "## d\n- We always deploy from the blue cluster\n", []string{"We deploy from the green cluster"}, nil},
		{"restated unchanged", "## d\n- We always tag releases as vX.Y.Z\n## e\n- we always tag releases as vX.Y.Z!\n", nil,
			[]string{"We always tag releases as vX.Y.Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := extractHoist(Request{Evicted: []string{tt.evicted}, Pinned: tt.pinned})
			if !slices.Equal(got, tt.want) {
				t.Errorf("hoist = %q, want %q", got, tt.want)
			}
		})
	}
	// Rule lines are capped, keeping the newest; 📌 lines never are.
	var sb strings.Builder
	sb.WriteString("## d\n")
	subjects := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar")
	verbs := strings.Fields("sings dances swims climbs paints rides reads writes cooks knits sails runs hikes skates draws")
	for i := range 15 {
		fmt.Fprintf(&sb, "- rule %d: %s always %s\n- 📌 pin %d\n", i, subjects[i], verbs[i], i)
	}
	got := extractHoist(Request{Evicted: []string{sb.String()}})
	pins, rules := 0, 0
	for _, h := range got {
		if strings.HasPrefix(h, "pin ") {
			pins++
		} else {
			rules++
		}
	}
	if pins != 15 || rules != maxKeywordHoist || !slices.Contains(got, "rule 14: oscar always draws") || slices.Contains(got, "rule 0: alpha always sings") {
		t.Errorf("capped hoist = %q", got)
	}
}

func TestExtractiveDeterministicAndContract(t *testing.T) {
	req := Request{Agent: "a", Evicted: readEvicted(t), OldCondensed: "- 2026-01-01 x"}
	first, err := Extractive{}.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := Extractive{}.Summarize(context.Background(), req)
		if err != nil || again.Condensed != first.Condensed || !slices.Equal(again.Hoist, first.Hoist) {
			t.Fatalf("second run differs: %v", err)
		}
	}
	parsed, err := Parse(contractJSON(t, first))
	if err != nil {
		t.Fatalf("extractive output breaks the contract: %v", err)
	}
	if parsed.Condensed != first.Condensed || !slices.Equal(parsed.Hoist, first.Hoist) {
		t.Errorf("Parse changed the extractive output:\n%q\n%q", parsed.Condensed, first.Condensed)
	}
}

func TestExtractiveErrors(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func() context.Context
		req     Request
		wantErr string
	}{
		{"nothing to condense", context.Background, Request{Evicted: []string{"", "  \n"}}, "nothing to condense"},
		{"canceled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, Request{Evicted: []string{"## x"}}, "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extractive{}.Summarize(tt.ctx(), tt.req)
			var se *Error
			if !errors.As(err, &se) || se.Reason != ReasonFailed || se.Provider != ProviderExtractive || !strings.Contains(se.Message, tt.wantErr) {
				t.Fatalf("err = %v, want extractive *Error containing %q", err, tt.wantErr)
			}
		})
	}
	// A single heading over a tiny budget is cut, never dropped to nothing.
	res, err := Extractive{}.Summarize(context.Background(), Request{Evicted: []string{"## 2026-10-01 — a very long heading about many things"}, WordBudget: 3})
	if err != nil || res.Condensed == "" || budgetWords(res.Condensed) > 3 {
		t.Errorf("tiny budget: %q, %v", res.Condensed, err)
	}
}

// contractJSON renders a Result as the reply an LLM would send.
func contractJSON(t *testing.T, r Result) string {
	t.Helper()
	hoist := r.Hoist
	if hoist == nil {
		hoist = []string{}
	}
	b, err := json.Marshal(map[string]any{"condensed": r.Condensed, "hoist": hoist})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDurableRuleIsPrecise holds the hoist to precision on a labelled set
// of lines: rules and decisions as notes write them are pinned; talk that
// merely uses "always", "never", "must" or "decided" is not (a wrong pin
// stays in the file for good; a missed rule is still in the condensed
// history and the archive).
func TestDurableRuleIsPrecise(t *testing.T) {
	rules := []string{
		"Always run `go test ./...` before pushing.",
		"Never push to main directly.",
		"We always tag releases as vX.Y.Z",
		"Decided: SQLite is the default backend",
		"convention: never share temp dirs between tests",
		"Decided to keep markdown as the source of truth; the index is disposable.",
		"We switched to pgx for PostgreSQL.",
		"From now on, every migration gets a down script.",
		"Do not edit generated files in gen/ by hand.",
		"Rule: secrets live in vault, never in the repo.",
		"We must keep go.mod at go 1.26.",
		"Must sign every release tag.",
	}
	talk := []string{
		"I'm always here to support you! Go create something awesome.",
		"Jon: You never shy away from a challenge and always try something new.",
		"[D5:8] Gina: Always good to hear! See you later!",
		"John: Always staying filled with self-belief.",
		"Meal times are always fun.",
		"It's always nice to know that what I'm doing is making an impact.",
		"I've never really tried publishing a book, but this might be the first!",
		"Thanksgiving's always special for us.",
		"we have not decided whether to enable -race in CI",
		"should we never retry?",
		"not always reproducible",
		"haven't decided on the logo yet",
		"The flaky test always fails on Mondays, no idea why.",
		"Never again.",
		"Must have been a long day for you.",
		"Don't worry about it, we'll fix it tomorrow.",
		"Keep going and never give up!",
		"We never know what tomorrow brings, but I am ready for it and so is the rest of the team after all these long weeks of work together on it.",
	}
	for _, l := range rules {
		if !isDurableRule(l) {
			t.Errorf("rule not hoisted: %q", l)
		}
	}
	for _, l := range talk {
		if isDurableRule(l) {
			t.Errorf("talk hoisted as a durable fact: %q", l)
		}
	}
}

// TestInfoScoreCountsADateOnceInAnyForm: a date weighs the same whether it
// is written "2023-05-07", "7 May 2023" or "May 7th, 2023", so which
// sentences are kept does not depend on how their writer dates things.
func TestInfoScoreCountsADateOnceInAnyForm(t *testing.T) {
	forms := []string{"2023-05-07", "7 May 2023", "May 7th, 2023", "7th of May 2023"}
	want := infoScore("The pottery class started on " + forms[0] + ".")
	for _, f := range forms[1:] {
		if got := infoScore("The pottery class started on " + f + "."); got != want {
			t.Errorf("infoScore with %q = %.2f, with %q = %.2f", f, got, forms[0], want)
		}
	}
	if none := infoScore("The pottery class started."); none >= want {
		t.Errorf("a date adds nothing: %.2f without, %.2f with", none, want)
	}
}

// TestExtractiveSpendsNoWordsOnRepeatsAndCourtesy: a period line gives its
// date once, and a sentence of courtesy is not kept even when the budget
// has room for everything.
func TestExtractiveSpendsNoWordsOnRepeatsAndCourtesy(t *testing.T) {
	sec := "## 2023-05-08 — session 1 (1:56 pm on 8 May, 2023)\n" +
		"[D1:1] Alice: Hi Bob!\n" +
		"[D1:2] Bob: Hey Alice! I adopted a cat named Biscuit yesterday.\n" +
		"[D1:3] Alice: Thanks, Bob!\n" +
		"[D1:4] Alice: Actually, I moved to Lisbon in 2021.\n"
	res, err := Extractive{}.Summarize(context.Background(), Request{Evicted: []string{sec}, WordBudget: 600})
	if err != nil {
		t.Fatal(err)
	}
	want := "- 2023-05-08 — session 1\n" +
		"  - Bob: I adopted a cat named Biscuit yesterday (7 May 2023).\n" +
		"  - Alice: I moved to Lisbon in 2021."
	if res.Condensed != want {
		t.Errorf("condensed:\n%s\nwant:\n%s", res.Condensed, want)
	}
}

// TestCentralityWithVectorsAlsoWeighsWords: with sentence vectors, two
// sentences the vectors cannot tell apart still differ in centrality by
// the words they share with their period.
func TestCentralityWithVectorsAlsoWeighsWords(t *testing.T) {
	cs := []*cand{
		newCand("", "The Orion release ships on Friday.", 0, 0),
		newCand("", "The Orion release notes are done.", 1, 1),
		newCand("", "It rained all afternoon.", 2, 2),
	}
	lexicalVectors(cs)
	for _, c := range cs {
		c.vec = []float32{1, 0}
	}
	got := centrality(cs)
	if !(got[0] > got[2] && got[1] > got[2]) {
		t.Errorf("centrality = %v: the sentences sharing words with the period are not more central", got)
	}
	for i, g := range got {
		if g < 0 || g > 1 {
			t.Errorf("centrality[%d] = %v, outside [0, 1]", i, g)
		}
	}
}
