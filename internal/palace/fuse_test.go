package palace

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/chunk"

	"github.com/hivemem/hivemem/internal/store"
)

func ids(fs []Fused) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func TestFusion(t *testing.T) {
	lex := []store.Scored{{ID: "a", Score: 9}, {ID: "b", Score: 1}, {ID: "c", Score: 0.5}}
	vec := []store.Scored{{ID: "c", Score: 0.9}, {ID: "b", Score: 0.8}, {ID: "d", Score: 0.1}}
	cases := []struct {
		name string
		got  []Fused
		want []string
	}{
		// a's BM25 lead survives normalisation; c wins the vector side.
		{"score", FuseScores(lex, vec, 0.5), []string{"a", "c", "b", "d"}},
		// Vector-heavy weighting lets the vector order lead.
		{"score heavy vector", FuseScores(lex, vec, 3), []string{"c", "b", "a", "d"}},
		// RRF: b and c appear in both lists and beat a.
		{"rrf", Fuse(lex, vec, 60, 1), []string{"c", "b", "a", "d"}},
		{"lexical only", FuseScores(lex, nil, 0.5), []string{"a", "b", "c"}},
		{"vector only", Fuse(nil, vec, 60, 1), []string{"c", "b", "d"}},
		{"empty", FuseScores(nil, nil, 0.5), []string{}},
		// A small hive: two close BM25 matches; the weaker one must not be
		// flattened to zero, so the clear semantic winner comes first.
		{"small hive", FuseScores(
			[]store.Scored{{ID: "pilot", Score: 2.97}, {ID: "login", Score: 2.37}},
			[]store.Scored{{ID: "login", Score: 0.56}, {ID: "pilot", Score: 0.39}, {ID: "x", Score: 0.32}, {ID: "y", Score: 0.28}},
			0.5), []string{"login", "pilot", "x", "y"}},
	}
	for _, c := range cases {
		got := ids(c.got)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
	f := FuseScores(lex, vec, 0.5)
	if f[0].LexicalRank != 1 || f[0].VectorRank != 0 || f[1].VectorRank != 1 || f[1].LexicalRank != 3 {
		t.Errorf("ranks not carried: %+v", f[:2])
	}
}

func TestBoostSessionsFavoursAConversationWithMoreThanOneStrongMatch(t *testing.T) {
	r := func(id, source string, score float64) rankedDrawer {
		return rankedDrawer{store.Drawer{ID: id, Source: source, Room: chunk.RoomSession}, Fused{ID: id, Score: score}}
	}
	note := func(id, source string, score float64) rankedDrawer {
		return rankedDrawer{store.Drawer{ID: id, Source: source, Room: chunk.RoomRecent}, Fused{ID: id, Score: score}}
	}
	cases := []struct {
		name string
		in   []rankedDrawer
		want []string
	}{
		// b's conversation has a second strong match: 0.9 + 0.3·0.8
		// beats a's lone 1.0; b's own two keep their order.
		{"second match lifts its conversation", []rankedDrawer{r("a", "x.md", 1), r("b1", "y.md", 0.9), r("b2", "y.md", 0.8), r("c", "z.md", 0.85)},
			[]string{"b1", "b2", "a", "c"}},
		// a weak second match is not enough to pass a clear winner.
		{"weak second match", []rankedDrawer{r("a", "x.md", 1), r("b1", "y.md", 0.7), r("b2", "y.md", 0.1)},
			[]string{"a", "b1", "b2"}},
		// one conversation only: every drawer gains the same share of the
		// best, and the order is unchanged.
		{"one conversation keeps its order", []rankedDrawer{r("a", "m.md", 1), r("b", "m.md", 0.9), r("c", "m.md", 0.5), r("d", "m.md", 0.4)},
			[]string{"a", "b", "c", "d"}},
		{"conversations with one drawer each", []rankedDrawer{r("a", "x.md", 1), r("b", "y.md", 0.9)},
			[]string{"a", "b"}},
		// a memory file is many subjects: its second match lifts nothing.
		{"memory file notes are left alone", []rankedDrawer{note("a", "alice.md", 1), note("b1", "bob.md", 0.9), note("b2", "bob.md", 0.8)},
			[]string{"a", "b1", "b2"}},
		{"empty", nil, []string{}},
	}
	for _, c := range cases {
		out := boostSessions(c.in, 0.3)
		got := make([]string, len(out))
		for i, x := range out {
			got[i] = x.d.ID
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	in := []rankedDrawer{r("a", "x.md", 1), r("b", "x.md", 0.5)}
	boostSessions(in, 0.3)
	if in[0].f.Score != 1 || in[1].f.Score != 0.5 {
		t.Errorf("the input was changed: %+v", in)
	}
}
