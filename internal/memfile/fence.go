package memfile

import "strings"

// fenceState tracks CommonMark fenced code blocks line by line, so that a
// "## " line inside a code block is read as body text, not as a heading.
// Only top-level fences count (at most 3 spaces of indentation); fences
// nested in list items or block quotes are not recognised.
type fenceState struct {
	ch byte // '`' or '~' while a fence is open
	n  int  // length of the opening fence; 0 when no fence is open
}

func (f *fenceState) open() bool { return f.n > 0 }

// step advances the state over one line (without its line ending).
func (f *fenceState) step(content string) {
	if f.n == 0 {
		if ch, n, ok := fenceOpener(content); ok {
			f.ch, f.n = ch, n
		}
		return
	}
	if isFenceCloser(content, f.ch, f.n) {
		f.ch, f.n = 0, 0
	}
}

// closer returns a line that closes the open fence.
func (f *fenceState) closer() string {
	return strings.Repeat(string(f.ch), f.n)
}

// fenceIndent strips up to three leading spaces; more indentation (or a tab,
// which reaches column 4) makes the line an indented code line, not a fence.
func fenceIndent(s string) (string, bool) {
	for i := 0; i < 4 && i < len(s); i++ {
		switch s[i] {
		case ' ':
			if i == 3 {
				return "", false
			}
		case '\t':
			return "", false
		default:
			return s[i:], true
		}
	}
	return strings.TrimLeft(s, " "), len(s) < 4
}

// fenceRun returns the fence character and run length at the start of s.
func fenceRun(s string) (byte, int) {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return s[0], n
}

// fenceOpener reports whether a line opens a fenced code block: at least
// three backticks or tildes; a backtick fence's info string may not contain
// a backtick (that line is inline code).
func fenceOpener(content string) (byte, int, bool) {
	s, ok := fenceIndent(content)
	if !ok {
		return 0, 0, false
	}
	ch, n := fenceRun(s)
	if n < 3 {
		return 0, 0, false
	}
	if ch == '`' && strings.IndexByte(s[n:], '`') >= 0 {
		return 0, 0, false
	}
	return ch, n, true
}

// isFenceCloser reports whether a line closes a fence opened with n ch's: a
// run of at least n of the same character, followed only by spaces or tabs.
func isFenceCloser(content string, ch byte, n int) bool {
	s, ok := fenceIndent(content)
	if !ok {
		return false
	}
	c, m := fenceRun(s)
	return c == ch && m >= n && strings.Trim(s[m:], " \t") == ""
}
