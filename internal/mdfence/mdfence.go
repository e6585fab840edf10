// Package mdfence recognises CommonMark fenced code blocks line by line. It
// is the one definition of where a fence opens and closes, shared by the
// memory-file parser, the summariser and the HTML renderer: a "## " line
// that one of them reads as code, the others must too, or a condensed
// region or a rendered page would disagree with the file about where its
// sections are.
//
// Only top-level fences count (at most three spaces of indentation);
// fences nested in list items or block quotes are not recognised.
package mdfence

import "strings"

// State follows the fences of a text line by line; its zero value is
// outside any fence.
type State struct {
	ch byte // '`' or '~' while a fence is open
	n  int  // length of the opening fence; 0 when no fence is open
}

// Open reports whether the lines stepped over leave a fence open.
func (s *State) Open() bool { return s.n > 0 }

// Step advances the state over one line (without its line ending) and
// reports whether the line is a fence line: one that opens or closes a
// fence or, inside one, merely looks like either (such as "```sh" inside a
// "```" fence). Callers that skip fence lines and the code between them
// skip both alike.
func (s *State) Step(line string) bool {
	if s.n == 0 {
		ch, n, ok := Opener(line)
		if ok {
			s.ch, s.n = ch, n
		}
		return ok
	}
	if Closes(line, s.ch, s.n) {
		s.ch, s.n = 0, 0
		return true
	}
	_, n := run(line)
	return n >= 3
}

// Closer returns a line that closes the open fence ("" when none is).
func (s *State) Closer() string {
	return strings.Repeat(string(s.ch), s.n)
}

// Opener reports whether a line opens a fenced code block, and with which
// character and run length: at least three backticks or tildes; a backtick
// fence's info string may not contain a backtick (that line is inline
// code).
func Opener(line string) (ch byte, n int, ok bool) {
	s, ok := indent(line)
	if !ok {
		return 0, 0, false
	}
	ch, n = fenceRun(s)
	if n < 3 {
		return 0, 0, false
	}
	if ch == '`' && strings.IndexByte(s[n:], '`') >= 0 {
		return 0, 0, false
	}
	return ch, n, true
}

// IsOpener reports whether a line opens a fenced code block.
func IsOpener(line string) bool {
	_, _, ok := Opener(line)
	return ok
}

// Closes reports whether a line closes a fence opened with n ch's: a run of
// at least n of the same character, followed only by spaces or tabs.
func Closes(line string, ch byte, n int) bool {
	s, ok := indent(line)
	if !ok {
		return false
	}
	c, m := fenceRun(s)
	return c == ch && m >= n && strings.Trim(s[m:], " \t") == ""
}

// run is the fence character and run length a line starts with, after the
// indentation a fence may have.
func run(line string) (byte, int) {
	s, ok := indent(line)
	if !ok {
		return 0, 0
	}
	return fenceRun(s)
}

// indent strips up to three leading spaces; more indentation (or a tab,
// which reaches column 4) makes the line an indented code line, not a fence.
func indent(s string) (string, bool) {
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
