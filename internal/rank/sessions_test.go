package rank

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/store"
)

func TestBoostSessionsFavoursAConversationWithMoreThanOneStrongMatch(t *testing.T) {
	r := func(id, source string, score float64) Ranked {
		return Ranked{store.Drawer{ID: id, Source: source, Room: chunk.RoomSession}, Fused{ID: id, Score: score}}
	}
	note := func(id, source string, score float64) Ranked {
		return Ranked{store.Drawer{ID: id, Source: source, Room: chunk.RoomRecent}, Fused{ID: id, Score: score}}
	}
	cases := []struct {
		name string
		in   []Ranked
		want []string
	}{
		// b's conversation has a second strong match: 0.9 + 0.3·0.8
		// beats a's lone 1.0; b's own two keep their order.
		{"second match lifts its conversation", []Ranked{r("a", "x.md", 1), r("b1", "y.md", 0.9), r("b2", "y.md", 0.8), r("c", "z.md", 0.85)},
			[]string{"b1", "b2", "a", "c"}},
		// a weak second match is not enough to pass a clear winner.
		{"weak second match", []Ranked{r("a", "x.md", 1), r("b1", "y.md", 0.7), r("b2", "y.md", 0.1)},
			[]string{"a", "b1", "b2"}},
		// one conversation only: every drawer gains the same share of the
		// best, and the order is unchanged.
		{"one conversation keeps its order", []Ranked{r("a", "m.md", 1), r("b", "m.md", 0.9), r("c", "m.md", 0.5), r("d", "m.md", 0.4)},
			[]string{"a", "b", "c", "d"}},
		{"conversations with one drawer each", []Ranked{r("a", "x.md", 1), r("b", "y.md", 0.9)},
			[]string{"a", "b"}},
		// a memory file is many subjects: its second match lifts nothing.
		{"memory file notes are left alone", []Ranked{note("a", "alice.md", 1), note("b1", "bob.md", 0.9), note("b2", "bob.md", 0.8)},
			[]string{"a", "b1", "b2"}},
		{"empty", nil, []string{}},
	}
	for _, c := range cases {
		out := BoostSessions(c.in, 0.3)
		got := make([]string, len(out))
		for i, x := range out {
			got[i] = x.Drawer.ID
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	in := []Ranked{r("a", "x.md", 1), r("b", "x.md", 0.5)}
	BoostSessions(in, 0.3)
	if in[0].Fused.Score != 1 || in[1].Fused.Score != 0.5 {
		t.Errorf("the input was changed: %+v", in)
	}
}

// TestSessionVectorsLiftTheConversationNearestTheQuery: a conversation
// whose drawers together point at the query gains on one that does not,
// scaled on the candidates' own cosines; memory-file drawers, a single
// conversation and drawers not embedded yet change nothing.
func TestSessionVectorsLiftTheConversationNearestTheQuery(t *testing.T) {
	qv := []float32{1, 0}
	r := func(id, source, room string, score, cos float64, vrank int) Ranked {
		return Ranked{store.Drawer{ID: id, Source: source, Room: room}, Fused{ID: id, Score: score, Vector: cos, VectorRank: vrank}}
	}
	s, m := chunk.RoomSession, chunk.RoomRecent
	base := []Ranked{r("far1", "far.md", s, 1, 0.2, 2), r("near1", "near.md", s, 0.9, 0.8, 1)}
	for _, c := range []struct {
		name  string
		in    []Ranked
		convs map[string][][]float32
		want  string
	}{
		{"the near conversation passes", base, map[string][][]float32{
			"far.md": {{0, 1}, {0.1, 1}}, "near.md": {{1, 0}, {1, 0.1}}}, "near1 far1"},
		{"one conversation", base, map[string][][]float32{"near.md": {{1, 0}}}, "far1 near1"},
		{"not embedded yet", base, map[string][][]float32{"far.md": {nil}, "near.md": {{1, 0}}}, "far1 near1"},
		{"memory files are left alone", []Ranked{r("far1", "far.md", m, 1, 0.2, 2), r("near1", "near.md", m, 0.9, 0.8, 1)}, map[string][][]float32{
			"far.md": {{0, 1}}, "near.md": {{1, 0}}}, "far1 near1"},
	} {
		var got []string
		for _, x := range SessionVectors(qv, c.in, c.convs, SessionVectorWeight) {
			got = append(got, x.Drawer.ID)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s, want %s", c.name, g, c.want)
		}
	}
}
