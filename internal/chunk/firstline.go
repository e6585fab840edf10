package chunk

import "strings"

// FirstLine is the first line of body that is not blank, trimmed; a line
// over 160 bytes is cut to about 40 estimated tokens (CutToTokens). It is
// what a wake-up shows of a section, and what a note remembered without a
// heading is headed by.
func FirstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			if len(l) > 160 {
				l = CutToTokens(l, 40) // marks its own cut
			}
			return l
		}
	}
	return ""
}

// CutToTokens keeps whole words of s up to about n estimated tokens,
// marking a cut with " …".
func CutToTokens(s string, n int) string {
	if EstimateTokens(s) <= n {
		return s
	}
	words := strings.Fields(s)
	lo, hi := 0, len(words)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if EstimateTokens(strings.Join(words[:mid], " ")) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(words[:lo], " ") + " …"
}
