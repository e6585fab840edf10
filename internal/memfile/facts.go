package memfile

import (
	"strings"
	"unicode"
)

// pin is the marker of a pinned line; variation selector U+FE0F may follow.
const pin = "📌"

// NormalizeFact returns the dedup key of a fact: list markers ("- ", "* "),
// the 📌 marker and surrounding whitespace removed, inner whitespace runs
// collapsed to one space. "- X", "* X", "📌 X", "- 📌 X" and " X  " all give
// "X". Case and punctuation are kept: they can change a fact's meaning.
func NormalizeFact(s string) string {
	// Collapse first, so that a marker followed by any kind of space
	// normalises the same however the fact was written down.
	s = strings.Join(strings.Fields(s), " ")
	for {
		t := stripListMarker(s)
		if rest, ok := strings.CutPrefix(t, pin); ok {
			t = strings.TrimSpace(strings.TrimPrefix(rest, "\uFE0F"))
		}
		if t == s {
			break
		}
		s = t
	}
	return strings.Join(strings.Fields(s), " ")
}

// stripListMarker removes one leading "- " or "* " bullet (or a bare "-" /
// "*") from a trimmed line and trims what follows.
func stripListMarker(s string) string {
	if s == "" || (s[0] != '-' && s[0] != '*') {
		return s
	}
	if len(s) == 1 {
		return ""
	}
	if strings.IndexByte(" \t\f\v\r", s[1]) >= 0 {
		return strings.TrimSpace(s[2:])
	}
	return s
}

// isPinnedLine reports whether a line is pinned wherever it appears: it
// starts with 📌, or with a bullet followed by 📌, after optional leading
// white space.
func isPinnedLine(line string) bool {
	// Any leading white space (a lone CR, U+2029 …): text rendered again
	// can lose it (a trimmed region), and a 📌 line must be pinned in both.
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	if strings.HasPrefix(t, pin) {
		return true
	}
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "-\t") || strings.HasPrefix(t, "*\t") {
		return strings.HasPrefix(strings.TrimLeftFunc(t[2:], unicode.IsSpace), pin)
	}
	return false
}

// factFromLine turns one line of a pinned region (or a 📌 line) into the fact
// it states: trimmed, one bullet removed, whitespace collapsed, 📌 kept. ok
// is false for blank lines, placeholders and lines with no content.
func factFromLine(line string) (fact string, ok bool) {
	s := stripListMarker(strings.TrimSpace(trimEOL(line)))
	if s == "" || isPlaceholder(s) || NormalizeFact(s) == "" {
		return "", false
	}
	return strings.Join(strings.Fields(s), " "), true
}

// isPlaceholderLine reports whether a whole line is the placeholder
// hivemem writes under an empty region, "_(none yet)_" (optionally bulleted
// or indented).
func isPlaceholderLine(line string) bool {
	return isPlaceholder(stripListMarker(strings.TrimSpace(trimEOL(line))))
}

// isPlaceholder reports whether a trimmed, unbulleted line is Placeholder,
// the text Template and Build (and the system hivemem replaces) write under
// an empty region. Only that exact text is one: anything else in a pinned
// region was written by someone and is a fact, however much it looks like
// a placeholder ("(none on staging hosts)", "*Nothing runs on Fridays*").
// Misreading a hand-written placeholder as a fact keeps one line too many;
// misreading a fact as a placeholder would drop it on the next condensation.
func isPlaceholder(s string) bool {
	// Compared with its whitespace collapsed, as facts are: "_(none\fyet)_"
	// would otherwise become the fact "_(none yet)_".
	return s == Placeholder || strings.Join(strings.Fields(s), " ") == Placeholder
}

// IsPlaceholderBody reports whether a region body holds nothing but blank
// and placeholder lines, so indexers can skip it.
func IsPlaceholderBody(body string) bool {
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" && !isPlaceholderLine(l) {
			return false
		}
	}
	return true
}
