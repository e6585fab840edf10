package rank

import (
	"sort"

	"github.com/hivemem/hivemem/internal/store"
)

// Fused is one candidate after fusion.
type Fused struct {
	ID          string
	Score       float64
	Lexical     float64
	LexicalRank int
	Vector      float64
	VectorRank  int
}

// Fuse combines two rankings by reciprocal rank fusion:
// score = 1/(k+rank_lex) + w/(k+rank_vec).
// Rank fusion needs no calibration between BM25 and cosine scales, which
// differ per query. With one ranking it keeps that ranking's order.
func Fuse(lex, vec []store.Scored, k int, vecWeight float64) []Fused {
	return combine(lex, vec,
		func(rank int, _ float64) float64 { return 1 / float64(k+rank) },
		func(rank int, _ float64) float64 { return vecWeight / float64(k+rank) })
}

// Fusion methods.
const (
	FusionScore = "score"
	FusionRRF   = "rrf"
)

// FuseScores adds the two rankings' normalised scores: lexical + w·vector.
// BM25 is divided by the best BM25 (zero keeps meaning "no match", so the
// weakest of a few matches in a small hive is not flattened to nothing);
// cosine, which has no natural zero, is min-max normalised over its
// candidates. Unlike rank fusion it keeps how far ahead a strong match is,
// which on LoCoMo (dev split) gave the best recall and MRR of the variants
// tried (README, "Benchmarks").
func FuseScores(lex, vec []store.Scored, w float64) []Fused {
	lspan := 1.0
	if len(lex) > 0 && lex[0].Score > 0 {
		lspan = lex[0].Score
	}
	vlo, vspan := scoreRange(vec)
	return combine(lex, vec,
		func(_ int, s float64) float64 { return s / lspan },
		func(_ int, s float64) float64 { return w * (s - vlo) / vspan })
}

// scoreRange is the low end and span of a best-first list's scores; a list
// whose scores are all equal maps them to 1.
func scoreRange(xs []store.Scored) (lo, span float64) {
	if len(xs) == 0 {
		return 0, 1
	}
	hi, lo := xs[0].Score, xs[len(xs)-1].Score
	if hi-lo <= 0 {
		return lo - 1, 1
	}
	return lo, hi - lo
}

// combine sums each candidate's contributions (given its 1-based rank and
// score in each list) and orders the result best first; ties go to the
// better single rank, then the id, so results are deterministic.
func combine(lex, vec []store.Scored, lexPart, vecPart func(rank int, score float64) float64) []Fused {
	m := make(map[string]*Fused, len(lex)+len(vec))
	get := func(id string) *Fused {
		f, ok := m[id]
		if !ok {
			f = &Fused{ID: id}
			m[id] = f
		}
		return f
	}
	for i, s := range lex {
		f := get(s.ID)
		f.Lexical, f.LexicalRank = s.Score, i+1
		f.Score += lexPart(i+1, s.Score)
	}
	for i, s := range vec {
		f := get(s.ID)
		f.Vector, f.VectorRank = s.Score, i+1
		f.Score += vecPart(i+1, s.Score)
	}
	out := make([]Fused, 0, len(m))
	for _, f := range m {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		bi, bj := bestRank(out[i]), bestRank(out[j])
		if bi != bj {
			return bi < bj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func bestRank(f Fused) int {
	r := 1 << 30
	if f.LexicalRank > 0 {
		r = f.LexicalRank
	}
	if f.VectorRank > 0 && f.VectorRank < r {
		r = f.VectorRank
	}
	return r
}
