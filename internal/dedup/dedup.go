// Package dedup tells whether a note an agent is about to write repeats
// one it already has, so that remember and pin do not store the same
// thing twice — without ever refusing a note that changes a value.
//
// A note repeats another only when it adds nothing: every word of each
// that can carry a value has its counterpart in the other (Keys). Two
// words are counterparts when they are the same once case, inflection
// (the index's Porter stem: "runs" and "run", "Fridays" and "friday"),
// a contraction ("don't" and "do not") or a number written as a word
// ("two" and "2") are set aside. Only glue — articles, the present of
// "to be", "of", "for", "and", pronouns of the speaker — may stand in
// one note and not the other; every other word may carry the value that
// changed ("on" and "off", "must" and "can", "blue" and "green", "not",
// "now … instead"), so a word without its counterpart makes the note
// new. Word order is free, except that the values both notes name
// (Values: numbers, names, identifiers) come in the same order (so "from
// eu-west-1 to us-east-2" and "from us-east-2 to eu-west-1" differ).
//
// There is no list of opposites: the rule is decided from the two notes.
// A meaning-preserving paraphrase in other words ("DB" for "database")
// is written as a new note: a repeat costs one line; a refused change
// loses the truth. A vector cosine is never used to make a repeat: a
// changed value reads as close as a paraphrase to the vectors (measured:
// see the README, "No repeats").
//
// When a note is new but restates the subject of an older one (Restates:
// most of the subject words of the shorter note are in the other, values
// aside), the caller says so, so that the agent can mark the older note
// superseded.
package dedup

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/hivemem/hivemem/internal/store/fts"
)

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

// glue is the words that carry no value of their own: a note that adds
// or drops one says the same thing. Anything else — prepositions and
// particles ("on", "off", "up", "before"), modal verbs ("can", "must"),
// adverbs ("now", "no longer") — may be what changed.
var glue = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the is are am be of for and so that which it its this these those
		there we our us i my me you your also please`) {
		glue[w] = true
	}
}

// words splits text into tokens: runs of letters, digits and the marks
// that hold an identifier together ("db-stage-2", "jan@papir.cz",
// "/config/flags.json", "02:00"), with surrounding punctuation trimmed.
func words(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;()[]{}\"“”!?—–", r)
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

// expand splits a contraction into the words it stands for ("don't" →
// "do not", "can't" → "can not", "cannot" → "can not", "server's" →
// "server"); any other word comes back alone.
func expand(w string) []string {
	w = strings.ReplaceAll(w, "’", "'")
	lw := strings.ToLower(w)
	switch {
	case lw == "cannot":
		return []string{w[:3], "not"}
	case lw == "can't":
		return []string{w[:3], "not"}
	case lw == "won't":
		return []string{"will", "not"}
	case lw == "shan't":
		return []string{"shall", "not"}
	case strings.HasSuffix(lw, "n't"):
		return []string{w[:len(w)-3], "not"}
	case strings.HasSuffix(lw, "'s"):
		return []string{w[:len(w)-2]}
	case strings.HasSuffix(lw, "'re"):
		return []string{w[:len(w)-3], "are"}
	case strings.HasSuffix(lw, "'ll"):
		return []string{w[:len(w)-3], "will"}
	case strings.HasSuffix(lw, "'ve"):
		return []string{w[:len(w)-3], "have"}
	}
	return []string{w}
}

// numberWords are the numbers written as words that a note may also
// write in digits.
var numberWords = map[string]int{}

func init() {
	for i, w := range strings.Fields(`zero one two three four five six seven eight nine ten eleven twelve thirteen
		fourteen fifteen sixteen seventeen eighteen nineteen twenty`) {
		numberWords[w] = i
	}
}

// key is a token as notes are compared: lower case; a number word as its
// digits; a plain word as the index stems it; an identifier or a number
// as written.
func key(w string) string {
	lw := strings.ToLower(w)
	if n, ok := numberWords[lw]; ok {
		return strconv.Itoa(n)
	}
	if !isWord(lw) {
		return lw
	}
	if t := fts.Tokens(lw); len(t) == 1 {
		return t[0]
	}
	return lw
}

func isWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return w != ""
}

// isGlue reports whether the word w (as written) is glue: a glue word in
// lower case or capitalised, not an acronym ("US" is a place, "us" glue).
func isGlue(w string) bool {
	lw := strings.ToLower(w)
	if !glue[lw] {
		return false
	}
	return len(w) == 1 || w == lw || !isAllUpper(w)
}

func isAllUpper(w string) bool {
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// Keys is the set of a note's words that may carry a value, as compared
// (see key): every word but glue.
func Keys(s string) map[string]bool {
	out := map[string]bool{}
	for _, raw := range words(s) {
		for _, w := range expand(raw) {
			if w == "" || isGlue(w) {
				continue
			}
			out[key(w)] = true
		}
	}
	return out
}

// Values is the list, in order, of the tokens of a note that name a
// value: a digit, an identifier's inner marks, code in backticks, a
// capitalised word inside a sentence, a number word (as its digits).
func Values(s string) []string {
	var out []string
	first := true
	for _, raw := range strings.Fields(s) {
		code := strings.Contains(raw, "`")
		for _, w0 := range words(raw) {
			for _, w := range expand(w0) {
				if w == "" {
					continue
				}
				_, num := numberWords[strings.ToLower(w)]
				isValue := code || num || strings.IndexFunc(w, unicode.IsDigit) >= 0 ||
					strings.ContainsAny(w, "-_/@.:\\") || (!first && isName(w) && !isGlue(w))
				if isValue {
					out = append(out, key(w))
				}
				first = false
			}
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

// negated reports whether a note says not, no or never.
func negated(s string) bool {
	for _, raw := range words(s) {
		for _, w := range expand(raw) {
			switch strings.ToLower(w) {
			case "not", "no", "never", "without", "nothing", "none", "nobody":
				return true
			}
		}
	}
	return false
}

// sameOrder reports whether the values a and b have in common come in
// the same order in both (each value's first place counted).
func sameOrder(a, b []string) bool {
	inB := map[string]bool{}
	for _, v := range b {
		inB[v] = true
	}
	inA := map[string]bool{}
	for _, v := range a {
		inA[v] = true
	}
	var ca, cb []string
	seen := map[string]bool{}
	for _, v := range a {
		if inB[v] && !seen[v] {
			seen[v] = true
			ca = append(ca, v)
		}
	}
	clear(seen)
	for _, v := range b {
		if inA[v] && !seen[v] {
			seen[v] = true
			cb = append(cb, v)
		}
	}
	for i := range ca {
		if ca[i] != cb[i] {
			return false
		}
	}
	return true
}

// Verdict is the comparison of a new note with one the agent has.
type Verdict struct {
	Repeat bool
	// Why says which rule decided: "identical" or "same words" for a
	// repeat; for a note that is new: "one is negated", "values differ",
	// "words differ" or "values reordered".
	Why string
}

// Reasons a note is or is not a repeat (Verdict.Why).
const (
	WhyIdentical = "identical"
	WhySameWords = "same words"
	WhyNegated   = "one is negated"
	WhyValues    = "values differ"
	WhyWords     = "words differ"
	WhyReordered = "values reordered"
)

// Compare decides whether note repeats have: only when every word of each
// that may carry a value has its counterpart in the other (see the
// package doc).
func Compare(have, note string) Verdict {
	if Normalize(have) == Normalize(note) {
		return Verdict{Repeat: true, Why: WhyIdentical}
	}
	kh, kn := Keys(have), Keys(note)
	if sameSet(kh, kn) {
		if !sameOrder(Values(have), Values(note)) {
			return Verdict{Why: WhyReordered}
		}
		return Verdict{Repeat: true, Why: WhySameWords}
	}
	if negated(have) != negated(note) {
		return Verdict{Why: WhyNegated}
	}
	vh, vn := Values(have), Values(note)
	if !subset(vh, kn) || !subset(vn, kh) {
		return Verdict{Why: WhyValues}
	}
	return Verdict{Why: WhyWords}
}

// subset reports whether every value in vs is a key of keys.
func subset(vs []string, keys map[string]bool) bool {
	for _, v := range vs {
		if !keys[v] {
			return false
		}
	}
	return true
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

// Find returns the first candidate note repeats, if any.
func Find(note string, cands []Candidate) (Match, bool) {
	for _, c := range cands {
		if v := Compare(c.Text, note); v.Repeat {
			return Match{c, v}, true
		}
	}
	return Match{}, false
}

// Subject thresholds (see Restates): the least number of subject words
// two notes share, and the least share of the longer note's subject
// words found in the other.
const (
	SubjectMinShared = 1
	SubjectMinShare  = 0.6
)

// function words say nothing of what a note is about (they may still be
// the value that changed, which Keys keeps).
var function = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`to of in on at by for from with as into onto over under up down out off via per
		not no never always usually often sometimes now also just only very about than then instead still again
		do does did done has have had will would can could should shall may might must was were been being
		what when where why how who whom`) {
		function[key(w)] = true
	}
}

// subjectWords is a note's keys less its values and function words: the
// words that say what it is about.
func subjectWords(s string) map[string]bool {
	k := Keys(s)
	for _, v := range Values(s) {
		delete(k, v)
	}
	for w := range k {
		if function[w] {
			delete(k, w)
		}
	}
	return k
}

// Restates returns the candidate whose subject note restates with
// something changed, if any: the one whose subject words (Keys less
// Values and function words) share the most with note's, when they share
// at least SubjectMinShared and at least SubjectMinShare of the larger
// set; of
// equal ones the last (candidates come oldest first). A repeat of the
// candidate is not a restatement (Find says so first).
func Restates(note string, cands []Candidate) (Candidate, bool) {
	sn := subjectWords(note)
	best, bestShare := -1, 0.0
	for i, c := range cands {
		sc := subjectWords(c.Text)
		shared := 0
		for k := range sc {
			if sn[k] {
				shared++
			}
		}
		if shared < SubjectMinShared {
			continue
		}
		share := float64(shared) / float64(max(len(sc), len(sn)))
		if share >= SubjectMinShare && share >= bestShare {
			best, bestShare = i, share
		}
	}
	if best < 0 {
		return Candidate{}, false
	}
	return cands[best], true
}

// Outdates reports whether newer, a note written after older, states
// older's subject again with something changed (Restates), and so may
// make it outdated; a repeat does not.
func Outdates(older, newer string) bool {
	if Compare(older, newer).Repeat {
		return false
	}
	_, ok := Restates(newer, []Candidate{{Text: older}})
	return ok
}
