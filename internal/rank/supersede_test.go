package rank

import (
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
)

// TestSupersessionArithmeticIsTheSameEveryRun: the similarities and the
// choice of key line, sums of weights over many words, come out bit for
// bit the same on every run (a sum in map order differs in its last bits,
// which flips a pair at the margin or a tie between two lines).
func TestSupersessionArithmeticIsTheSameEveryRun(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa")
	idf := func(w string) float64 { return 1 / float64(3+len(w)%7) * (1 + float64(w[0])/97) }
	docs := make([]map[string]int, 3)
	for i := range docs {
		docs[i] = map[string]int{}
		for k, w := range words {
			docs[i][w] = 1 + (k*(i+2))%4
		}
	}
	first := wordSimilarity(docs, idf)
	// Two lines that hold the same question words: the first one is the
	// key line, every time.
	q := words[:12]
	text := strings.Join(q, " ") + " zulu\n" + strings.Join(q, " ") + " xray"
	for run := range 200 {
		if got := wordSimilarity(docs, idf); !slices.EqualFunc(got, first, slices.Equal) {
			t.Fatalf("run %d: similarities %v, first run %v", run, got, first)
		}
		if k := keyLine(store.Drawer{Text: text}, q, idf); k["zulu"] != 1 {
			t.Fatalf("run %d: key line %v, want the first line", run, k)
		}
	}
}

// TestCurrentAbove: a hit marked superseded (by the search or by the
// agent) that ranks above its replacement goes to just below it, the
// others keep their order; a replacement written after the day the query
// is asked as of leaves it in place.
func TestCurrentAbove(t *testing.T) {
	hit := func(id, by, date string) Placed { return Placed{ID: id, SupersededBy: by, Date: date} }
	tests := []struct {
		hits []Placed
		asOf string
		want string
	}{
		{[]Placed{hit("old", "new", "2026-01-01"), hit("x", "", "2026-02-01"), hit("new", "", "2026-03-01"), hit("y", "", "")}, "", "x new old y"},
		{[]Placed{hit("a", "c", "2026-01-01"), hit("b", "c", "2026-02-01"), hit("c", "", "2026-03-01")}, "", "c a b"},
		{[]Placed{hit("new", "", "2026-03-01"), hit("old", "new", "2026-01-01")}, "", "new old"},
		{[]Placed{hit("old", "gone", "2026-01-01"), hit("x", "", "")}, "", "old x"},
		{[]Placed{hit("old", "new", "2026-01-01"), hit("new", "", "2026-03-01")}, "2026-02-01", "old new"},
	}
	for _, tt := range tests {
		order := CurrentAbove(slices.Clone(tt.hits), tt.asOf)
		if order == nil { // nothing moves
			order = make([]int, len(tt.hits))
			for i := range order {
				order[i] = i
			}
		}
		var got []string
		for _, i := range order {
			got = append(got, tt.hits[i].ID)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("CurrentAbove = %s, want %s", g, tt.want)
		}
	}
}

// TestSubjectCountsLeaveValuesOut: two statements of one subject with
// other values come out alike.
func TestSubjectCountsLeaveValuesOut(t *testing.T) {
	a := subjectCounts("- Switched the API deploy command to `make deploy` on 2025-12-06.")
	b := subjectCounts("Update on the API deploy command: it's task-release:publish now, says Priya.")
	for _, w := range []string{"api", "deploi", "command"} {
		if a[w] == 0 || b[w] == 0 {
			t.Errorf("%q missing: %v / %v", w, a, b)
		}
	}
	for _, w := range []string{"make", "2025", "publish", "priya", "06"} {
		if a[w] != 0 || b[w] != 0 {
			t.Errorf("value %q kept: %v / %v", w, a, b)
		}
	}
}
