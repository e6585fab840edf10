// Package memfile parses and renders an agent's memory.md losslessly.
//
// A memory file is a header (every line before the first "## " heading)
// followed by sections, each a "## " heading line and the lines under it up to
// the next heading. After the first condensation a file also has three
// regions, marked by fixed headings: pinned durable facts, condensed history,
// and "## Recent", after which the newest sections follow verbatim.
//
// The parse keeps every byte: File.Render of an unmodified parse gives back
// the input exactly, whatever it contains (CRLF, BOM, no final newline,
// duplicate regions, unclosed code fences). The logical views (Pinned,
// Condensed, Recent) merge duplicate regions instead of dropping them, and
// the editing functions (AppendSection, AddPinned, Build) take untrusted text
// without letting it change the file's structure.
package memfile

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/mdfence"
)

// Region headings, verbatim, as written by condensation (compatible with the
// files of the system hivemem replaces).
const (
	HeadingPinned    = "## 📌 Durable facts (pinned — never condensed)"
	HeadingCondensed = "## 🗜 Condensed history"
	HeadingRecent    = "## Recent"
)

// Placeholder is written under an empty pinned or condensed region. It is
// never parsed as a fact or as condensed text.
const Placeholder = "_(none yet)_"

// ArchivePointerPrefix starts the last line of a condensed history written
// by hivemem: where the full text of the evicted sections is, e.g.
// "Full text of evicted sections: hive/archive/alice/".
const ArchivePointerPrefix = "Full text of evicted sections: "

// bom is the UTF-8 byte order mark some editors put at the start of a file.
const bom = "\uFEFF"

// Kind says what role a section plays in the file.
type Kind int

const (
	// KindSection is an ordinary section written by an agent.
	KindSection Kind = iota
	// KindPinned is a pinned-facts region heading and its facts.
	KindPinned
	// KindCondensed is a condensed-history region.
	KindCondensed
	// KindRecent is the "## Recent" marker; the ordinary sections after it
	// are the recent ones.
	KindRecent
)

// String names the kind for logs, JSON and golden files.
func (k Kind) String() string {
	switch k {
	case KindSection:
		return "section"
	case KindPinned:
		return "pinned"
	case KindCondensed:
		return "condensed"
	case KindRecent:
		return "recent"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// Section is one "## " heading and the lines under it.
type Section struct {
	Kind Kind
	// Heading is the heading text without the leading "## " and without the
	// line ending.
	Heading string
	// Raw is the exact bytes of the section: the heading line through the
	// last body line, line endings included.
	Raw string
	// StartLine is the 1-based line of the heading; EndLine the 1-based last
	// line of the section (inclusive).
	StartLine int
	EndLine   int
	// Date is the first valid ISO date ("YYYY-MM-DD") in the heading, or "".
	Date string
	// SupersededBy is the heading of the section that replaces this one,
	// from a "> superseded by:" line at the start of its body; Supersedes
	// the heading of the one it replaces ("> supersedes:"). "" for none.
	SupersededBy string
	Supersedes   string
}

// Body returns the section without its heading line.
func (s Section) Body() string {
	if i := strings.IndexByte(s.Raw, '\n'); i >= 0 {
		return s.Raw[i+1:]
	}
	return ""
}

// File is a parsed memory file. Header followed by every section's Raw, in
// order, is the file.
type File struct {
	// Header is the exact bytes before the first heading (a leading BOM stays
	// here even when line 1 is a heading).
	Header string
	// HeaderLines is the number of lines in Header (a final line without a
	// newline counts). It is 0 when line 1 is a heading, even if a BOM
	// precedes it.
	HeaderLines int
	Sections    []Section

	// tail is the fence state at the end of the file: an unclosed code
	// fence swallows anything appended after it, so edits must close it.
	tail mdfence.State
}

// Parse splits a memory file into header and sections. Every valid UTF-8
// text parses; the only errors are invalid UTF-8 and NUL bytes, which mark a
// binary or corrupt file rather than notes, and which a rewrite could not
// keep byte for byte through the text-based edits.
func Parse(data []byte) (*File, error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, fmt.Errorf("memfile: parse: %w", err)
	}
	return parseText(text), nil
}

// parseText parses text already known to be valid (see checkText).
func parseText(text string) *File {
	f := &File{}
	var fs mdfence.State
	var starts []int // byte offsets of heading lines
	var startLines []int
	lineNo := 0
	headerEnd := len(text)
	for off := 0; off < len(text); {
		end := lineEnd(text, off)
		lineNo++
		line := text[off:end]
		lineStart := off
		if off == 0 && strings.HasPrefix(line, bom) {
			line = line[len(bom):]
			lineStart = len(bom)
		}
		content := trimEOL(line)
		if !fs.Open() && isHeading(content) {
			if len(starts) == 0 {
				headerEnd = lineStart
			}
			starts = append(starts, lineStart)
			startLines = append(startLines, lineNo)
		} else {
			fs.Step(content)
		}
		off = end
	}
	f.Header = text[:headerEnd]
	if len(starts) == 0 {
		f.HeaderLines = lineNo
	} else {
		f.HeaderLines = startLines[0] - 1
	}
	for i, start := range starts {
		end := len(text)
		endLine := lineNo
		if i+1 < len(starts) {
			end = starts[i+1]
			endLine = startLines[i+1] - 1
		}
		raw := text[start:end]
		heading := trimEOL(firstLine(raw))[len("## "):]
		s := Section{
			Kind:      kindOf(heading),
			Heading:   heading,
			Raw:       raw,
			StartLine: startLines[i],
			EndLine:   endLine,
			Date:      findDate(heading),
		}
		if s.Kind == KindSection {
			s.SupersededBy, s.Supersedes, _ = parseMarkers(s.Body())
		}
		f.Sections = append(f.Sections, s)
	}
	f.tail = fs
	return f
}

// Render returns the file's bytes: Header then every section's Raw. For an
// unmodified parse it is byte-identical to the input.
func (f *File) Render() []byte {
	n := len(f.Header)
	for _, s := range f.Sections {
		n += len(s.Raw)
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(f.Header)
	for _, s := range f.Sections {
		b.WriteString(s.Raw)
	}
	return b.Bytes()
}

// HasRegions reports whether the file has any region heading, i.e. has been
// condensed (or pinned into) at least once.
func (f *File) HasRegions() bool {
	for _, s := range f.Sections {
		if s.Kind != KindSection {
			return true
		}
	}
	return false
}

// CountPinned is the number of pinned facts of the file data (Pinned):
// what a write that changed them reports, counted in the bytes it wrote.
func CountPinned(data []byte) (int, error) {
	f, err := Parse(data)
	if err != nil {
		return 0, err
	}
	return len(f.Pinned()), nil
}

// Pinned returns every durable fact in the file, in document order, deduped
// by NormalizeFact: each fact line of every pinned region (duplicate regions
// merged) and every line anywhere that starts with "📌" or "- 📌". Facts are
// returned without list marker and with whitespace collapsed; a leading 📌 is
// kept. Placeholders are never facts.
func (f *File) Pinned() []string {
	var facts []string
	seen := map[string]bool{}
	var add func(line string, any bool)
	add = func(line string, any bool) {
		// Outside a pinned region a lone CR is a line break once the text
		// is rendered again (escapeLines), so "x\r📌 y" holds a 📌 line:
		// look at each piece, or Build would hoist it only the second time.
		if body := trimEOL(line); !any && strings.Contains(body, "\r") {
			for _, piece := range strings.Split(body, "\r") {
				add(piece, false)
			}
			return
		}
		if !any && !isPinnedLine(line) {
			return
		}
		fact, ok := factFromLine(line)
		if !ok {
			return
		}
		key := NormalizeFact(fact)
		if seen[key] {
			return
		}
		seen[key] = true
		facts = append(facts, fact)
	}
	forLines(f.Header, func(l string) { add(l, false) })
	for _, s := range f.Sections {
		inRegion := s.Kind == KindPinned
		forLines(s.Body(), func(l string) { add(l, inRegion) })
	}
	return facts
}

// Condensed returns the text of all condensed-history regions, merged in
// order (blank line between regions), with placeholder lines removed, CRLF
// turned into LF and surrounding whitespace trimmed. "" if there is none.
func (f *File) Condensed() string {
	var parts []string
	for _, s := range f.Sections {
		if s.Kind != KindCondensed {
			continue
		}
		var b strings.Builder
		forLines(s.Body(), func(l string) {
			if isPlaceholderLine(l) {
				return
			}
			b.WriteString(trimEOL(l))
			b.WriteByte('\n')
		})
		if t := strings.TrimSpace(b.String()); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// RecentBody returns the bodies of all "## Recent" headings, verbatim and
// concatenated. It is usually empty, but whatever is there is kept.
func (f *File) RecentBody() string {
	var b strings.Builder
	for _, s := range f.Sections {
		if s.Kind == KindRecent {
			b.WriteString(s.Body())
		}
	}
	return b.String()
}

// Recent returns the ordinary (KindSection) sections, in file order. In a
// condensed file these are the recent sections; in a file that was never
// condensed they are all of its sections.
func (f *File) Recent() []Section {
	var out []Section
	for _, s := range f.Sections {
		if s.Kind == KindSection {
			out = append(out, s)
		}
	}
	return out
}

// checkText rejects what a memory file must not contain: invalid UTF-8 and
// NUL bytes. The error gives the line and byte offset of the first problem.
func checkText(s string) error {
	line := 1
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0:
			return fmt.Errorf("NUL byte at line %d (byte offset %d): not a text file", line, i)
		case c == '\n':
			line++
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				return fmt.Errorf("invalid UTF-8 at line %d (byte offset %d)", line, i)
			}
			i += size
		}
	}
	return nil
}

// lineEnd returns the offset just past the line that starts at off (past its
// "\n", or len(text) for a last line without one). Only "\n" ends a line; a
// "\r" before it is part of the line ending, a lone "\r" is text.
func lineEnd(text string, off int) int {
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(text)
}

// trimEOL strips a line's ending ("\n", "\r\n", or a final "\r").
func trimEOL(line string) string {
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

func firstLine(s string) string {
	return s[:lineEnd(s, 0)]
}

// forLines calls fn for each line of s, line ending included.
func forLines(s string, fn func(line string)) {
	for off := 0; off < len(s); {
		end := lineEnd(s, off)
		fn(s[off:end])
		off = end
	}
}

// isHeading reports whether a line (without ending) is a section heading:
// exactly "## " at the start of the line. "###" and deeper, "##" alone and
// indented "## " are body text.
func isHeading(content string) bool {
	return strings.HasPrefix(content, "## ")
}

// kindOf classifies a heading (text after "## "). Matching tolerates
// surrounding spaces and an emoji variation selector, and accepts a pinned or
// condensed heading whose wording after the fixed prefix differs, so files
// edited by hand or by other tools keep their regions.
func kindOf(heading string) Kind {
	h := strings.TrimSpace(strings.ReplaceAll(heading, "\uFE0F", ""))
	switch {
	case strings.HasPrefix(h, "📌 Durable facts"):
		return KindPinned
	case strings.HasPrefix(h, "🗜 Condensed history"):
		return KindCondensed
	case strings.EqualFold(h, "Recent"):
		return KindRecent
	}
	return KindSection
}

// findDate returns the first valid ISO calendar date (YYYY-MM-DD, not part
// of a longer digit run) in s, or "".
func findDate(s string) string {
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i+10 <= len(s); i++ {
		if isDigit(i-1) || isDigit(i+10) {
			continue
		}
		ok := s[i+4] == '-' && s[i+7] == '-'
		for _, j := range []int{0, 1, 2, 3, 5, 6, 8, 9} {
			ok = ok && isDigit(i+j)
		}
		if ok && validDate(s[i:i+10]) {
			return s[i : i+10]
		}
	}
	return ""
}

func validDate(d string) bool {
	num := func(s string) int {
		n := 0
		for _, c := range s {
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, day := num(d[0:4]), num(d[5:7]), num(d[8:10])
	if m < 1 || m > 12 || day < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return day <= days
}
