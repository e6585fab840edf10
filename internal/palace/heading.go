package palace

import (
	"strings"
	"unicode"
)

// autoHeadingRunes bounds the title an automatic heading takes from a
// note's first line.
const autoHeadingRunes = 60

// autoHeading is the title of a note remembered without a heading: its
// first line, whole when it fits autoHeadingRunes, else cut at the end of
// its first sentence when that ends within the bound (and is not a mere
// word or two), else at the last word that fits, and marked "…". Only a
// first word longer than the bound (a URL) is cut inside itself: the
// user's file never shows a word cut in two where a space was at hand.
func autoHeading(text string) string {
	line := firstLine(text)
	r := []rune(line)
	if len(r) <= autoHeadingRunes {
		return line
	}
	// The end of the first sentence, when it falls within the bound.
	for i := autoHeadingRunes / 3; i < autoHeadingRunes && i+1 < len(r); i++ {
		if strings.ContainsRune(".!?", r[i]) && unicode.IsSpace(r[i+1]) {
			return string(r[:i+1]) + " …"
		}
	}
	// The last space within the bound, with the punctuation before it
	// (a comma, a semicolon) left out.
	cut := -1
	for i := autoHeadingRunes; i > 0; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	if cut < 0 {
		return string(r[:autoHeadingRunes]) + "…"
	}
	head := strings.TrimRightFunc(string(r[:cut]), func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune(",;:–—-", c)
	})
	return head + "…"
}

// recentLine is a newest section's line in a wake-up: its heading, then
// its first line — once. A heading that already carries the first line
// (a note remembered without a heading: the date, then the first line or
// its beginning) is shown as the date and the first line, not as the
// same words twice.
func recentLine(heading, first string) string {
	if first == "" {
		return "- " + heading
	}
	prefix, title := "", heading
	if i := strings.Index(heading, " — "); i >= 0 {
		prefix, title = heading[:i+len(" — ")], heading[i+len(" — "):]
	}
	if carries(title, first) {
		return "- " + prefix + first
	}
	return "- " + heading + ": " + first
}

// carries reports whether a heading's title is the first line or its
// beginning: the first line itself, or a cut of it marked "…" (which may
// have ended inside a word, as older automatic headings did).
func carries(title, first string) bool {
	if title == first {
		return true
	}
	t, cut := strings.CutSuffix(title, "…")
	t = strings.TrimRightFunc(t, unicode.IsSpace)
	return cut && t != "" && strings.HasPrefix(first, t)
}
