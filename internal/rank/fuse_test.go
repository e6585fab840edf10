package rank

import (
	"testing"

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
