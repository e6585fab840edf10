package store

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Query is a search query analysed once, the same way for every layer: the
// palace refuses a lexical search without words from Terms, and a backend
// ranks by them.
type Query struct {
	Text   string
	Terms  []string // QueryTerms(Text)
	Filter Filter   // valid dates (see Filter.Validate)
}

// Analyze checks f's dates and extracts the words of text (QueryTerms).
func Analyze(text string, f Filter) (Query, error) {
	if err := f.Validate(); err != nil {
		return Query{}, err
	}
	return Query{Text: text, Terms: QueryTerms(text), Filter: f}, nil
}

// Validate reports a malformed date bound, so that a typo such as
// "2026-13-01" is a clear error instead of a silently empty result.
func (f Filter) Validate() error {
	if err := CheckDate("since", f.Since); err != nil {
		return err
	}
	return CheckDate("until", f.Until)
}

// ValidDate accepts "" or a real calendar date written YYYY-MM-DD. Dates are
// compared as strings by every backend, so any other spelling would sort
// wrongly.
func ValidDate(s string) error { return CheckDate("", s) }

// CheckDate is ValidDate for a date named what ("since", "as of"): the
// one date check and its one message, the same from every front end
// (`since date "2026-13-01" is not a day (want YYYY-MM-DD)`), which says
// what the value is for rather than how a parser failed.
func CheckDate(what, s string) error {
	if s == "" {
		return nil
	}
	if dateShaped(s) {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return nil
		}
	}
	if what != "" {
		what += " "
	}
	return fmt.Errorf("%sdate %q is not a day (want YYYY-MM-DD)", what, s)
}

// dateShaped reports whether s is four, two and two ASCII digits joined by
// dashes.
func dateShaped(s string) bool {
	if len(s) != len(time.DateOnly) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// MaxQueryTerms caps how many terms a lexical query keeps: beyond a few dozen
// terms an OR query only gets slower, not better.
const MaxQueryTerms = 32

// stopwords are dropped from lexical queries because they match most
// drawers and only dilute BM25; the list is deliberately short.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true,
	"be": true, "but": true, "by": true, "did": true, "do": true, "does": true,
	"for": true, "from": true, "had": true, "has": true, "have": true,
	"how": true, "i": true, "if": true, "in": true, "into": true, "is": true,
	"it": true, "its": true, "me": true, "my": true, "no": true, "not": true,
	"of": true, "on": true, "or": true, "our": true, "so": true, "such": true,
	"that": true, "the": true, "their": true, "then": true, "there": true,
	"these": true, "they": true, "this": true, "to": true, "was": true,
	"we": true, "were": true, "what": true, "when": true, "where": true,
	"which": true, "who": true, "why": true, "will": true, "with": true,
	"you": true, "your": true,
}

// QueryTerms turns a plain-text query into the words a lexical backend
// should look for: lowercased, split on anything that is not a letter, a
// digit or a combining mark (so every script survives and no punctuation can
// reach a query language), English stopwords dropped unless nothing else is
// left, duplicates removed, at most MaxQueryTerms kept in order of first
// appearance. A query with no words gives nil.
func QueryTerms(q string) []string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	pick := func(dropStop bool) []string {
		var out []string
		seen := make(map[string]bool)
		for _, w := range words {
			if seen[w] || (dropStop && stopwords[w]) {
				continue
			}
			seen[w] = true
			out = append(out, w)
			if len(out) == MaxQueryTerms {
				break
			}
		}
		return out
	}
	if terms := pick(true); len(terms) > 0 {
		return terms
	}
	return pick(false)
}
