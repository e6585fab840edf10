package memfile

import "strings"

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
// spaces or tabs.
func isPinnedLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, pin) {
		return true
	}
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "-\t") || strings.HasPrefix(t, "*\t") {
		return strings.HasPrefix(strings.TrimLeft(t[2:], " \t"), pin)
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

// isPlaceholderLine reports whether a whole line is a placeholder such as
// "_(none yet)_" (optionally bulleted).
func isPlaceholderLine(line string) bool {
	s := stripListMarker(strings.TrimSpace(trimEOL(line)))
	return s != "" && isPlaceholder(s)
}

// isPlaceholder reports whether a trimmed, unbulleted line only says that
// there is nothing here: a short "none…"/"nothing…" wrapped in italics or
// parentheses ("_(none yet)_", "(none)", "_none_", "*nothing yet*"), or a
// bare "none" / "none yet". "None of the tests need network" is a fact.
func isPlaceholder(s string) bool {
	inner, wrapped := unwrap(s)
	inner = strings.ToLower(strings.TrimRight(inner, ".…! "))
	words := strings.Fields(inner)
	if len(words) == 0 || (words[0] != "none" && words[0] != "nothing") {
		return false
	}
	if wrapped {
		return len(words) <= 4
	}
	return inner == "none" || inner == "none yet" || inner == "nothing yet"
}

// unwrap strips matching emphasis and bracket pairs around s ("_(x)_" → "x")
// and reports whether there were any.
func unwrap(s string) (string, bool) {
	pairs := [][2]string{{"_", "_"}, {"*", "*"}, {"(", ")"}, {"[", "]"}}
	wrapped := false
	for {
		s = strings.TrimSpace(s)
		changed := false
		for _, p := range pairs {
			if len(s) >= 2 && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
				s = s[len(p[0]) : len(s)-len(p[1])]
				wrapped, changed = true, true
			}
		}
		if !changed {
			return s, wrapped
		}
	}
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
