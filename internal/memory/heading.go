package memory

import (
	"strings"
	"time"
	"unicode"

	"github.com/hivemem/hivemem/internal/chunk"
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
	line := chunk.FirstLine(text)
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

// sectionHeading is the heading Remember writes: the date, then the
// heading given or the note's first line (see autoHeading).
func sectionHeading(heading, text string, now time.Time) string {
	heading = strings.TrimSpace(heading)
	if heading == "" {
		heading = autoHeading(text)
	}
	return now.UTC().Format("2006-01-02") + " — " + heading
}
