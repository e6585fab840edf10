package palace

import (
	"strings"
	"unicode"
)

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
