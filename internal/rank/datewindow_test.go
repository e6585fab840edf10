package rank

import (
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/when"
)

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestBoostDateWindowLiftsTheCandidatesDatedThen: a candidate dated in the
// window the query names gains a share of its own score (less with the
// distance in the slack, nothing beyond it); undated ones and a query
// naming no time leave the order as it was.
func TestBoostDateWindowLiftsTheCandidatesDatedThen(t *testing.T) {
	may := []when.Window{{From: day("2026-05-10"), To: day("2026-05-12"), Slack: 2}}
	r := func(id, date string, score float64) Ranked {
		return Ranked{store.Drawer{ID: id, Date: date}, Fused{ID: id, Score: score}}
	}
	for _, c := range []struct {
		name string
		in   []Ranked
		ws   []when.Window
		want string
	}{
		{"inside the window", []Ranked{r("a", "2026-04-01", 1), r("b", "2026-05-11", 0.7)}, may, "b a"},
		{"in the slack, less", []Ranked{r("a", "2026-04-01", 1), r("b", "2026-05-14", 0.7)}, may, "a b"},
		{"beyond the slack", []Ranked{r("a", "2026-04-01", 1), r("b", "2026-05-20", 0.9)}, may, "a b"},
		{"undated", []Ranked{r("a", "", 1), r("b", "", 0.9)}, may, "a b"},
		{"no time named", []Ranked{r("a", "2026-04-01", 1), r("b", "2026-05-11", 0.7)}, nil, "a b"},
		{"empty", nil, may, ""},
	} {
		var got []string
		for _, x := range BoostDateWindow(c.in, c.ws, DateWeight) {
			got = append(got, x.Drawer.ID)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s, want %s", c.name, g, c.want)
		}
	}
}

// TestWithDatedMovesTheDatedCandidatesUp: the candidates found inside a
// window of the time the query names that rank below the window come
// right after it, in their order, and are counted in it.
func TestWithDatedMovesTheDatedCandidatesUp(t *testing.T) {
	fused := []Fused{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	for _, c := range []struct {
		name   string
		window int
		dated  map[string]bool
		want   string
		n      int
	}{
		{"dated below the window", 2, map[string]bool{"e": true, "c": true}, "a b c e d", 4},
		{"dated inside the window", 2, map[string]bool{"a": true}, "a b c d e", 2},
		{"none dated", 2, nil, "a b c d e", 2},
		{"window over all", 9, map[string]bool{"e": true}, "a b c d e", 9},
	} {
		out, n := WithDated(fused, c.window, c.dated)
		var got []string
		for _, f := range out {
			got = append(got, f.ID)
		}
		if g := strings.Join(got, " "); g != c.want || n != c.n {
			t.Errorf("%s: %s (%d), want %s (%d)", c.name, g, n, c.want, c.n)
		}
	}
}
