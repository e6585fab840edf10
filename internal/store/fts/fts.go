package fts

import (
	"math"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// BM25 constants as in SQLite's fts5_aux.c. Variables, not constants, so
// that Go computes k1+1 in float64 as C does rather than exactly at compile
// time.
var (
	K1 = 1.2
	B  = 0.75
)

// HeadingWeight and TextWeight are the per-column BM25 weights of the
// palace: a heading hit counts twice a text hit.
const (
	HeadingWeight = 2
	TextWeight    = 1
)

// IDF is FTS5's bm25 IDF for a term found in df of n rows, clamp included:
// a term in half the rows or more weighs 1e-6.
func IDF(df, n int) float64 {
	v := math.Log((float64(n) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		return 1e-6
	}
	return v
}

// Tokens returns the tokens of s as 'porter unicode61 remove_diacritics 2'
// indexes them: exactly for ASCII text, and with Go's Unicode tables for
// any other (see the package comment).
func Tokens(s string) []string {
	var out []string
	emit := func(t string) { out = append(out, t) }
	if ASCIITokens(s, emit) {
		return out
	}
	var word []byte
	flush := func() {
		if len(word) == 0 {
			return
		}
		out = append(out, stem(word))
		word = word[:0]
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r < utf8.RuneSelf:
			if isTokenByte(byte(r)) {
				c := byte(r)
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				word = append(word, c)
			} else {
				flush()
			}
		case isDiacritic(r):
			// A token character that folds to nothing.
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || isSkinTone(r):
			word = appendFolded(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// isDiacritic reports the combining diacritical marks unicode61 treats as
// part of a token and removes.
func isDiacritic(r rune) bool { return r >= 0x300 && r <= 0x33f }

// isSkinTone reports the emoji skin-tone modifiers, which SQLite's tables
// class as token characters.
func isSkinTone(r rune) bool { return r >= 0x1f3fb && r <= 0x1f3ff }

// appendFolded appends r lowercased and, for a Latin letter, without its
// diacritics.
func appendFolded(dst []byte, r rune) []byte {
	r = unicode.ToLower(r)
	if r < 0xc0 || !unicode.Is(unicode.Latin, r) {
		return utf8.AppendRune(dst, r)
	}
	var buf [utf8.UTFMax]byte
	d := norm.NFD.Bytes(buf[:utf8.EncodeRune(buf[:], r)])
	for len(d) > 0 {
		c, n := utf8.DecodeRune(d)
		d = d[n:]
		if !unicode.Is(unicode.Mn, c) {
			dst = utf8.AppendRune(dst, c)
		}
	}
	return dst
}

// stem runs FTS5's Porter stemmer on a folded token (any bytes: the C code
// treats every non-ASCII byte as a consonant, and so does the port).
func stem(w []byte) string {
	if len(w) > porterMaxToken || len(w) < 3 {
		return string(w)
	}
	var buf [porterMaxToken + 1]byte
	b := append(buf[:0], w...)
	return string(porterStem(b))
}
