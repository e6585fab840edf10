// Package fts holds what every palace backend's full-text side shares: a Go
// port of SQLite FTS5's tokenizer 'porter unicode61 remove_diacritics 2'
// (the SQLite backend's index; the PostgreSQL backend tokenizes with it so
// that both index the same tokens) and FTS5's BM25 constants.
//
// For ASCII the port is exact: unicode61 is simple there (letters and
// digits are token characters, everything else separates, case folds to
// lower) and the stemmer is a port of fts5_tokenize.c's Porter stemmer, rule
// for rule (tests in internal/store/sqlite hold it to SQLite's own
// tokenizer). Tokens handles any text with Go's Unicode tables: letters,
// numbers and private-use characters are token characters, case folds with
// unicode.ToLower, Latin letters lose their diacritics (NFD, marks dropped)
// and the combining diacritics U+0300-U+033F join the token and vanish, as
// unicode61 does; where Go's tables and SQLite's differ (rare letters'
// case folding, a few marks) the tokens may differ.
package fts

// MaxASCIIToken bounds the tokens ASCIITokens handles; FTS5 treats very long
// tokens specially, so text with one goes to SQLite.
const MaxASCIIToken = 1000

// porterMaxToken is FTS5_PORTER_MAX_TOKEN: longer tokens are not stemmed.
const porterMaxToken = 64

// IsASCII reports whether s is all ASCII, the text ASCIITokens handles.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ASCIITokens calls emit with each token of the ASCII text s, as FTS5
// would index it; ok is false (and nothing is emitted) when s is not ASCII
// or holds a token too long for the Go path.
func ASCIITokens(s string, emit func(tok string)) (ok bool) {
	if !IsASCII(s) {
		return false
	}
	var buf [porterMaxToken]byte
	for i, j := nextWord(s, 0); i < j; i, j = nextWord(s, j) {
		if j-i > MaxASCIIToken {
			return false
		}
	}
	for i, j := nextWord(s, 0); i < j; i, j = nextWord(s, j) {
		w := s[i:j]
		if len(w) > porterMaxToken || len(w) < 3 {
			emit(lowerASCII(w))
			continue
		}
		b := buf[:len(w)]
		for k := range b {
			c := w[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[k] = c
		}
		emit(string(porterStem(b)))
	}
	return true
}

// nextWord returns the bounds of the first run of token bytes in s at or
// after from; i == j when there is none.
func nextWord(s string, from int) (i, j int) {
	i = from
	for i < len(s) && !isTokenByte(s[i]) {
		i++
	}
	j = i
	for j < len(s) && isTokenByte(s[j]) {
		j++
	}
	return i, j
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func lowerASCII(w string) string {
	for i := 0; i < len(w); i++ {
		if 'A' <= w[i] && w[i] <= 'Z' {
			b := []byte(w)
			for k := i; k < len(b); k++ {
				if 'A' <= b[k] && b[k] <= 'Z' {
					b[k] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return w
}

// porterIsVowel is fts5PorterIsVowel: y is a vowel after a consonant.
func porterIsVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || yIsVowel && c == 'y'
}

// porterGobbleVC is fts5PorterGobbleVC: the length of the first
// vowels-then-consonant run of z (0 if there is none).
func porterGobbleVC(z []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(z); i++ {
		if cons = !porterIsVowel(z[i], cons); !cons {
			break
		}
	}
	for i++; i < len(z); i++ {
		if cons = !porterIsVowel(z[i], cons); cons {
			return i + 1
		}
	}
	return 0
}

func porterMGt0(z []byte) bool { return porterGobbleVC(z, false) != 0 }

func porterMGt1(z []byte) bool {
	n := porterGobbleVC(z, false)
	return n != 0 && porterGobbleVC(z[n:], true) != 0
}

func porterMEq1(z []byte) bool {
	n := porterGobbleVC(z, false)
	return n != 0 && porterGobbleVC(z[n:], true) == 0
}

// porterOstar is the *o condition: consonant-vowel-consonant, the last not
// w, x or y.
func porterOstar(z []byte) bool {
	last := z[len(z)-1]
	if last == 'w' || last == 'x' || last == 'y' {
		return false
	}
	mask := 0
	cons := false
	for _, c := range z {
		cons = !porterIsVowel(c, cons)
		mask <<= 1
		if cons {
			mask++
		}
	}
	return mask&7 == 5
}

func porterMGt1SorT(z []byte) bool {
	last := z[len(z)-1]
	return (last == 's' || last == 't') && porterMGt1(z)
}

// porterHasVowel is *v*.
func porterHasVowel(z []byte) bool {
	for i, c := range z {
		if porterIsVowel(c, i > 0) {
			return true
		}
	}
	return false
}

// porterRule is one suffix rule of the generated steps 1B-4: if the word
// ends in suf (and is longer than it), the rule is chosen; it then replaces
// suf by to when cond holds for the stem (nil: always).
type porterRule struct {
	suf, to string
	cond    func([]byte) bool
}

// The rule tables, keyed by the second-last letter of the word as in
// fts5_tokenize.c; within a key the first suffix that matches decides,
// whether or not its condition holds.
var (
	porterStep1B2 = map[byte][]porterRule{
		'a': {{"at", "ate", nil}},
		'b': {{"bl", "ble", nil}},
		'i': {{"iz", "ize", nil}},
	}
	porterStep2 = map[byte][]porterRule{
		'a': {{"ational", "ate", porterMGt0}, {"tional", "tion", porterMGt0}},
		'c': {{"enci", "ence", porterMGt0}, {"anci", "ance", porterMGt0}},
		'e': {{"izer", "ize", porterMGt0}},
		'g': {{"logi", "log", porterMGt0}},
		'l': {{"bli", "ble", porterMGt0}, {"alli", "al", porterMGt0}, {"entli", "ent", porterMGt0}, {"eli", "e", porterMGt0}, {"ousli", "ous", porterMGt0}},
		'o': {{"ization", "ize", porterMGt0}, {"ation", "ate", porterMGt0}, {"ator", "ate", porterMGt0}},
		's': {{"alism", "al", porterMGt0}, {"iveness", "ive", porterMGt0}, {"fulness", "ful", porterMGt0}, {"ousness", "ous", porterMGt0}},
		't': {{"aliti", "al", porterMGt0}, {"iviti", "ive", porterMGt0}, {"biliti", "ble", porterMGt0}},
	}
	porterStep3 = map[byte][]porterRule{
		'a': {{"ical", "ic", porterMGt0}},
		's': {{"ness", "", porterMGt0}},
		't': {{"icate", "ic", porterMGt0}, {"iciti", "ic", porterMGt0}},
		'u': {{"ful", "", porterMGt0}},
		'v': {{"ative", "", porterMGt0}},
		'z': {{"alize", "al", porterMGt0}},
	}
	porterStep4 = map[byte][]porterRule{
		'a': {{"al", "", porterMGt1}},
		'c': {{"ance", "", porterMGt1}, {"ence", "", porterMGt1}},
		'e': {{"er", "", porterMGt1}},
		'i': {{"ic", "", porterMGt1}},
		'l': {{"able", "", porterMGt1}, {"ible", "", porterMGt1}},
		'n': {{"ant", "", porterMGt1}, {"ement", "", porterMGt1}, {"ment", "", porterMGt1}, {"ent", "", porterMGt1}},
		'o': {{"ion", "", porterMGt1SorT}, {"ou", "", porterMGt1}},
		's': {{"ism", "", porterMGt1}},
		't': {{"ate", "", porterMGt1}, {"iti", "", porterMGt1}},
		'u': {{"ous", "", porterMGt1}},
		'v': {{"ive", "", porterMGt1}},
		'z': {{"ize", "", porterMGt1}},
	}
)

// porterApply runs one step's table on b; applied reports whether a rule
// rewrote the word.
func porterApply(b []byte, table map[byte][]porterRule) (_ []byte, applied bool) {
	if len(b) < 2 {
		return b, false
	}
	for _, r := range table[b[len(b)-2]] {
		n := len(r.suf)
		if len(b) <= n || string(b[len(b)-n:]) != r.suf {
			continue
		}
		stem := b[:len(b)-n]
		if r.cond == nil || r.cond(stem) {
			return append(stem, r.to...), true
		}
		return b, false
	}
	return b, false
}

// porterStep1B is fts5PorterStep1B: eed -> ee (m>0); ed, ing dropped after
// a vowel, which reports true so that step 1B2 runs.
func porterStep1B(b []byte) ([]byte, bool) {
	n := len(b)
	switch b[n-2] {
	case 'e':
		if n > 3 && string(b[n-3:]) == "eed" {
			if porterMGt0(b[:n-3]) {
				return b[:n-1], false
			}
		} else if n > 2 && string(b[n-2:]) == "ed" {
			if porterHasVowel(b[:n-2]) {
				return b[:n-2], true
			}
		}
	case 'n':
		if n > 3 && string(b[n-3:]) == "ing" {
			if porterHasVowel(b[:n-3]) {
				return b[:n-3], true
			}
		}
	}
	return b, false
}

// porterStem stems the lowercase ASCII word b (3 to 64 bytes) in place
// (it may grow by one byte within cap), as fts5PorterCb does.
func porterStem(b []byte) []byte {
	// Step 1A.
	if n := len(b); b[n-1] == 's' {
		if b[n-2] == 'e' {
			if n > 4 && b[n-4] == 's' && b[n-3] == 's' || n > 3 && b[n-3] == 'i' {
				b = b[:n-2]
			} else {
				b = b[:n-1]
			}
		} else if b[n-2] != 's' {
			b = b[:n-1]
		}
	}
	// Step 1B.
	var ok bool
	if b, ok = porterStep1B(b); ok {
		if b, ok = porterApply(b, porterStep1B2); !ok {
			n := len(b)
			c := b[n-1]
			if !porterIsVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == b[n-2] {
				b = b[:n-1]
			} else if porterMEq1(b) && porterOstar(b) {
				b = append(b, 'e')
			}
		}
	}
	// Step 1C.
	if n := len(b); b[n-1] == 'y' && porterHasVowel(b[:n-1]) {
		b[n-1] = 'i'
	}
	// Steps 2 to 4.
	b, _ = porterApply(b, porterStep2)
	b, _ = porterApply(b, porterStep3)
	b, _ = porterApply(b, porterStep4)
	// Step 5a.
	if n := len(b); b[n-1] == 'e' {
		if porterMGt1(b[:n-1]) || porterMEq1(b[:n-1]) && !porterOstar(b[:n-1]) {
			b = b[:n-1]
		}
	}
	// Step 5b.
	if n := len(b); n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && porterMGt1(b[:n-1]) {
		b = b[:n-1]
	}
	return b
}
