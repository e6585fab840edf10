package storetest

import (
	"math/rand/v2"
	"strings"
)

// Vocabulary makes n distinct pronounceable pseudo-words, for synthetic
// palaces (benchmarks, and tests that need realistic document
// frequencies).
func Vocabulary(rng *rand.Rand, n int) []string {
	const cons, vows = "bcdfghjklmnprstvwz", "aeiou"
	seen := map[string]bool{}
	words := make([]string, 0, n)
	for len(words) < n {
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteByte(cons[rng.IntN(len(cons))])
			sb.WriteByte(vows[rng.IntN(len(vows))])
		}
		if rng.IntN(2) == 0 {
			sb.WriteByte(cons[rng.IntN(len(cons))])
		}
		if w := sb.String(); !seen[w] && len(w) > 1 {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// Zipf samples words with a Zipf law (rank r has weight ~ 1/(r+2)^1.07),
// close to the word frequencies of English prose: the first words are the
// most frequent.
func Zipf(rng *rand.Rand, words []string) func() string {
	z := rand.NewZipf(rng, 1.07, 2, uint64(len(words)-1))
	return func() string { return words[z.Uint64()] }
}

// Words joins min+rng.IntN(span) words drawn by word with spaces.
func Words(rng *rand.Rand, word func() string, min, span int) string {
	ws := make([]string, min+rng.IntN(span))
	for i := range ws {
		ws[i] = word()
	}
	return strings.Join(ws, " ")
}
