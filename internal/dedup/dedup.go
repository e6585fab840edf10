// Package dedup tells whether a note an agent is about to write repeats
// one it already has, so that remember and pin do not store the same
// thing twice — without refusing a note that changes a value (the same
// sentence with another version, command, name or number is news, not a
// repeat).
//
// A note repeats another when
//
//   - both read the same once case, spacing, punctuation and list
//     markers are ignored (Normalize); or
//   - neither mentions a value the other does not (Values: a token with
//     a digit, code in backticks, a path, an address, an identifier with
//     "-", "_", "/", "@", ".", ":"; a name written with a capital inside a
//     sentence; a number, weekday or month word), both or neither say
//     not/no/never, and either no content word differs between them
//     (Tokens: stop words left out, a plural "s" dropped) or, unless one
//     is the other with a word or two put in place of others (a swapped
//     value reads as close as a paraphrase to the vectors), their MiniLM
//     vectors have a cosine of at least CosineMin.
//
// CosineMin and the rules were measured on testdata/pairs.tsv: paraphrases
// and trivial rewordings, which are repeats, against the same notes with
// one value changed, negated, or followed by a related or an unrelated
// note, which are not (see TestThresholdOnPairs and the README).
package dedup

import (
	"context"
	"math"
	"strings"
	"unicode"

	"github.com/hivemem/hivemem/internal/kernel"
)

// CosineMin is the least MiniLM cosine between two notes, with no value
// differing, for the second to repeat the first (measured: see the
// package doc).
const CosineMin = 0.78

// Normalize is a note's text as compared for identity: lower case, list
// markers and 📌 dropped, every run of punctuation and space one space.
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// stop words carry no fact of their own.
var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but so to of in on at by for from with as is are was were be been being
		it its this that these those there here we you they he she i our your their his her them him us me my
		do does did done has have had will would can could should shall may might must than then now also just
		only very about into onto over under up down out off via per each every all any some which who whom what
		when where why how`) {
		stop[w] = true
	}
}

// words splits text into tokens: runs of letters, digits and the marks
// that hold an identifier together ("db-stage-2", "jan@papir.cz",
// "/config/flags.json", "02:00"), with surrounding punctuation trimmed.
func words(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;()[]{}\"'“”‘’!?—–", r)
	})
	out := f[:0]
	for _, w := range f {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '`' && r != '/' })
		w = strings.Trim(w, "`")
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// stem folds a plural "s" and case, so that "Fridays" and "friday" agree.
func stem(w string) string {
	w = strings.ToLower(w)
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && isWord(w) {
		w = w[:len(w)-1]
	}
	return w
}

func isWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// Tokens is the set of content words of a note (stemmed, stop words out).
func Tokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(s) {
		if k := stem(w); !stop[k] {
			out[k] = true
		}
	}
	return out
}

var numberWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`zero one two three four five six seven eight nine ten eleven twelve twenty hundred thousand
		first second third half double once twice monday tuesday wednesday thursday friday saturday sunday
		january february march april june july august september october november december`) {
		numberWords[w] = true
	}
}

// Values is the set of tokens of a note that carry a value: a digit, an
// identifier's inner marks, code in backticks, a capitalised word inside
// a sentence, a number, weekday or month word.
func Values(s string) map[string]bool {
	out := map[string]bool{}
	first := true
	for _, raw := range strings.Fields(s) {
		code := strings.Contains(raw, "`")
		for _, w := range words(raw) {
			k := stem(w)
			isValue := code || numberWords[k] || strings.IndexFunc(w, unicode.IsDigit) >= 0 ||
				strings.ContainsAny(w, "-_/@.:\\") || (!first && isName(w) && !stop[k])
			if isValue {
				out[k] = true
			}
			first = false
		}
		for _, end := range []string{".", "!", "?", ":", ";", "—"} {
			first = first || strings.HasSuffix(raw, end)
		}
	}
	return out
}

// isName reports whether w is written as a name: a capital first letter
// and a lower-case letter after it ("Alice", "PostgreSQL"); acronyms in
// capitals alone ("DB", "CI", "UTC") are spellings, not values.
func isName(w string) bool {
	r := []rune(w)
	if !unicode.IsUpper(r[0]) {
		return false
	}
	for _, c := range r[1:] {
		if unicode.IsLower(c) {
			return true
		}
	}
	return false
}

// allStems is every word of s, stemmed, stop words included.
func allStems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(s) {
		out[stem(w)] = true
	}
	return out
}

// valuesDiffer reports whether one note has a value (Values) that the
// other does not mention at all.
func valuesDiffer(a, b string) bool {
	wa, wb := allStems(a), allStems(b)
	for v := range Values(a) {
		if !wb[v] {
			return true
		}
	}
	for v := range Values(b) {
		if !wa[v] {
			return true
		}
	}
	return false
}

// negated reports whether a note says not, no or never.
func negated(s string) bool {
	for _, w := range words(strings.ToLower(s)) {
		switch {
		case w == "not" || w == "no" || w == "never" || w == "cannot" || w == "without" || w == "nothing",
			strings.HasSuffix(w, "n't"), strings.HasSuffix(w, "n’t"):
			return true
		}
	}
	return false
}

// swapped reports whether note is have with a word or two put in place
// of others, the rest in the same order ("Use yarn, not npm" for "Use
// pnpm, not npm"; "Bob owns billing; ask him" for "Alice owns billing;
// ask her"): the same sentence with another value, which the vectors rate
// as close as a paraphrase. A paraphrase moves words around or says more,
// which this leaves to the cosine.
func swapped(have, note string) bool {
	a, b := stems(have), stems(note)
	if len(a) > 300 || len(b) > 300 {
		return false // long notes: a word swapped in them is left to the cosine
	}
	common := lcs(a, b)
	onlyA, onlyB := len(a)-common, len(b)-common
	return onlyA > 0 && onlyB > 0 && onlyA <= 2 && onlyB <= 2
}

// stems is every word of s in order, stemmed.
func stems(s string) []string {
	w := words(s)
	for i := range w {
		w[i] = stem(w[i])
	}
	return w
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sameSet reports whether a and b hold the same keys.
func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// Verdict is the comparison of a new note with one the agent has.
type Verdict struct {
	Repeat bool
	// Why says which rule decided: "identical", "same words",
	// "paraphrase", or for a note that is new: "values differ", "words
	// differ" or "cosine below threshold".
	Why    string
	Cosine float64 // -1 when no vectors were compared
}

// Compare decides whether note repeats have. cos is the cosine of their
// vectors, or NaN when there are none (lexical-only: only the first two
// rules apply).
func Compare(have, note string, cos float64) Verdict {
	v := Verdict{Cosine: cos}
	if math.IsNaN(cos) {
		v.Cosine = -1
	}
	if Normalize(have) == Normalize(note) {
		v.Repeat, v.Why = true, "identical"
		return v
	}
	if valuesDiffer(have, note) {
		v.Why = "values differ"
		return v
	}
	if negated(have) != negated(note) {
		v.Why = "one is negated"
		return v
	}
	th, tn := Tokens(have), Tokens(note)
	if sameSet(th, tn) {
		v.Repeat, v.Why = true, "same words"
		return v
	}
	if swapped(have, note) {
		v.Why = "a word swapped"
		return v
	}
	if math.IsNaN(cos) {
		v.Why = "words differ"
		return v
	}
	if cos >= CosineMin {
		v.Repeat, v.Why = true, "paraphrase"
		return v
	}
	v.Why = "cosine below threshold"
	return v
}

// Vectors gives texts their L2-normalised vectors (the palace's embedder
// behind its embedding cache).
type Vectors func(ctx context.Context, texts []string) ([][]float32, error)

// Candidate is a note the agent has: what to report it by, and its text.
type Candidate struct {
	Ref  string
	Text string
}

// Match is the note a new one repeats.
type Match struct {
	Candidate
	Verdict
}

// Find returns the first candidate note repeats, if any. vectors may be
// nil (no embedding model): then only the rules without a cosine apply.
// Only candidates that a cosine could make a repeat (no value differs,
// not a swapped word, a content word in common) are embedded.
func Find(ctx context.Context, vectors Vectors, note string, cands []Candidate) (Match, bool, error) {
	var maybe []Candidate
	for _, c := range cands {
		v := Compare(c.Text, note, math.NaN())
		if v.Repeat {
			return Match{c, v}, true, nil
		}
		if v.Why == "words differ" && overlap(Tokens(c.Text), Tokens(note)) {
			maybe = append(maybe, c)
		}
	}
	if vectors == nil || len(maybe) == 0 {
		return Match{}, false, nil
	}
	texts := make([]string, 0, len(maybe)+1)
	texts = append(texts, note)
	for _, c := range maybe {
		texts = append(texts, c.Text)
	}
	vecs, err := vectors(ctx, texts)
	if err != nil {
		return Match{}, false, err
	}
	if len(vecs) != len(texts) {
		return Match{}, false, nil
	}
	best, at := -2.0, -1
	for i := range maybe {
		if cos := Cosine(vecs[0], vecs[i+1]); cos > best {
			best, at = cos, i
		}
	}
	if v := Compare(maybe[at].Text, note, best); v.Repeat {
		return Match{maybe[at], v}, true, nil
	}
	return Match{}, false, nil
}

// overlap reports whether a and b share a key.
func overlap(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// Cosine of two L2-normalised vectors.
func Cosine(a, b []float32) float64 {
	n := min(len(a), len(b))
	return float64(kernel.Dot(a[:n], b[:n]))
}
