package memfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/mdfence"
)

// Template returns a new memory file for an agent: a title line and the
// three regions, empty.
func Template(id, name string) []byte {
	var b strings.Builder
	b.WriteString("# Memory — " + oneLine(cleanText(name)) + " (" + oneLine(cleanText(id)) + ")\n\n")
	b.WriteString(HeadingPinned + "\n" + Placeholder + "\n")
	b.WriteString(HeadingCondensed + "\n" + Placeholder + "\n")
	b.WriteString(HeadingRecent + "\n")
	return []byte(b.String())
}

// AppendSection appends "## heading" and body as a new last section. Heading
// and body usually come from agents over MCP, so they are data that can never
// change the file's structure: a body line that would parse as a heading is
// escaped as "\## …", a code fence the body leaves open is closed, and the
// heading must be one non-blank line that is not a region heading. Body line
// endings ("\n", "\r\n" or a lone "\r") become the file's line ending; one
// trailing newline of body is its terminator, not a blank line; an empty body
// gives a heading-only section.
//
// The existing bytes are kept, with two additions when needed so the new
// section parses as one: a final newline if the file lacks one, and a
// closing fence if the file ends inside an unclosed code fence (otherwise
// the new heading would be code). Parsing the result yields the old sections
// (the last one possibly extended by those additions) plus exactly one new
// section.
func AppendSection(data []byte, heading, body string) ([]byte, error) {
	out, _, err := AppendNewSection(data, heading, body)
	return out, err
}

// AppendNewSection is AppendSection that also returns the section
// appended, as the new file parses (heading, lines, date): what a writer
// reports of its note, computed from the bytes it writes rather than from
// a later read that another writer may have changed.
func AppendNewSection(data []byte, heading, body string) ([]byte, Section, error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, Section{}, fmt.Errorf("memfile: append section: existing file: %w", err)
	}
	if err := checkHeading(heading); err != nil {
		return nil, Section{}, fmt.Errorf("memfile: append section: %w", err)
	}
	if err := checkText(body); err != nil {
		return nil, Section{}, fmt.Errorf("memfile: append section: body: %w", err)
	}
	f := parseText(text)
	eol := eolOf(text, "\n")

	var b strings.Builder
	b.Grow(len(text) + len(heading) + len(body) + 16)
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteString(endLine(text, eol))
	}
	if f.tail.Open() {
		b.WriteString(f.tail.Closer() + eol)
	}
	b.WriteString("## " + heading + eol)
	b.WriteString(escapeLines(body, eol))
	out := b.String()

	// Belt and braces: the structure guarantee is the point of this function.
	g := parseText(out)
	if len(g.Sections) != len(f.Sections)+1 {
		return nil, Section{}, fmt.Errorf("memfile: append section %q: result has %d sections, want %d (please report this bug)", heading, len(g.Sections), len(f.Sections)+1)
	}
	last := g.Sections[len(g.Sections)-1]
	if last.Heading != heading || last.Kind != KindSection {
		return nil, Section{}, fmt.Errorf("memfile: append section %q: result ends with section %q (please report this bug)", heading, last.Heading)
	}
	return []byte(out), last, nil
}

// checkHeading validates a section heading supplied by an agent.
func checkHeading(heading string) error {
	if err := checkText(heading); err != nil {
		return fmt.Errorf("heading: %w", err)
	}
	if strings.ContainsAny(heading, "\r\n") {
		return errors.New("heading must be a single line (it contains a line break)")
	}
	if strings.TrimSpace(heading) == "" {
		return errors.New("heading is empty")
	}
	if k := kindOf(heading); k != KindSection {
		return fmt.Errorf("heading %q is reserved for the %s region", heading, k)
	}
	return nil
}

// AddPinned adds fact as "- fact" to the first pinned region, replacing its
// placeholder line if it has one, or after its last fact. A file without a
// pinned region gets one right after its header. ok is false (and data is
// returned unchanged) when the fact is already in the file by NormalizeFact,
// in a pinned region or on a 📌 line. fact must be one line of valid UTF-8;
// a leading bullet is dropped; blank or placeholder facts are refused.
func AddPinned(data []byte, fact string) (out []byte, ok bool, err error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, false, fmt.Errorf("memfile: pin: existing file: %w", err)
	}
	if err := checkText(fact); err != nil {
		return nil, false, fmt.Errorf("memfile: pin: fact: %w", err)
	}
	if strings.ContainsAny(fact, "\r\n") {
		return nil, false, errors.New("memfile: pin: a fact must be a single line (it contains a line break)")
	}
	display, valid := factFromLine(fact)
	if !valid {
		return nil, false, fmt.Errorf("memfile: pin: %q is empty or a placeholder, not a fact", fact)
	}
	f := parseText(text)
	key := NormalizeFact(display)
	for _, p := range f.Pinned() {
		if NormalizeFact(p) == key {
			return data, false, nil
		}
	}
	eol := eolOf(text, "\n")
	line := "- " + display

	var result string
	pinnedAt, off := -1, len(f.Header)
	for i, s := range f.Sections {
		if s.Kind == KindPinned {
			pinnedAt = i
			break
		}
		off += len(s.Raw)
	}
	if pinnedAt < 0 {
		pos := len(f.Header)
		var ins strings.Builder
		if pos > 0 && f.Header != bom && !strings.HasSuffix(f.Header, "\n") {
			ins.WriteString(endLine(f.Header, eol))
		}
		if len(f.Sections) == 0 && f.tail.Open() {
			ins.WriteString(f.tail.Closer() + eol)
		}
		ins.WriteString(HeadingPinned + eol + line + eol)
		result = text[:pos] + ins.String() + text[pos:]
	} else {
		s := f.Sections[pinnedAt]
		headLen := len(firstLine(s.Raw))
		insertAt := off + headLen // after the last non-blank line
		replaced := false
		lineOff := off + headLen
		forLines(s.Body(), func(l string) {
			start := lineOff
			lineOff += len(l)
			if replaced {
				return
			}
			if isPlaceholderLine(l) {
				content := trimEOL(l)
				end := start + len(content)
				result = text[:start] + line + text[end:]
				replaced = true
				return
			}
			if strings.TrimSpace(l) != "" {
				insertAt = lineOff
			}
		})
		if !replaced {
			if strings.HasSuffix(text[:insertAt], "\n") {
				result = text[:insertAt] + line + eol + text[insertAt:]
			} else {
				result = text[:insertAt] + eol + line + text[insertAt:]
			}
		}
	}

	g := parseText(result)
	for _, p := range g.Pinned() {
		if NormalizeFact(p) == key {
			return []byte(result), true, nil
		}
	}
	return nil, false, fmt.Errorf("memfile: pin %q: fact not found after adding it (please report this bug)", fact)
}

// Build assembles a condensed memory file: header, the three regions, and
// the recent sections. It is what condensation writes, so it keeps every
// input and never lets text change the structure:
//
//   - header is kept verbatim (a final newline is added if missing);
//   - pinned facts are rendered "- fact" (a leading 📌 is kept), deduped by
//     NormalizeFact, placeholders and blanks dropped, line breaks inside a
//     fact turned into spaces; none gives the placeholder;
//   - condensed is trimmed and written line by line, with heading-like lines
//     escaped and an unclosed fence closed; empty gives the placeholder;
//   - recentBody goes under "## Recent" verbatim (fence closed if open);
//   - each recent section's Raw is written verbatim; only when another
//     section follows is a missing final newline or an unclosed fence
//     closed, so the next heading stays a heading.
//
// Line endings follow header (or the first recent section): a CRLF file stays
// CRLF. Invalid UTF-8 and NUL bytes in the inputs are replaced or dropped.
func Build(header string, pinned []string, condensed string, recentBody string, recent []Section) []byte {
	eol := eolOf(header, "")
	if eol == "" && len(recent) > 0 {
		eol = eolOf(recent[0].Raw, "")
	}
	if eol == "" {
		eol = "\n"
	}

	var b strings.Builder
	h := closeBlock(cleanText(header), 0, eol)
	if h != "" && h != bom && !strings.HasSuffix(h, "\n") {
		h += endLine(h, eol)
		// A header ending in "\r" has just become CRLF: follow it.
		eol = eolOf(h, eol)
	}
	b.WriteString(h)

	b.WriteString(HeadingPinned + eol)
	seen := map[string]bool{}
	for _, p := range pinned {
		fact, ok := factFromLine(oneLine(cleanText(p)))
		if !ok || seen[NormalizeFact(fact)] {
			continue
		}
		seen[NormalizeFact(fact)] = true
		b.WriteString("- " + fact + eol)
	}
	if len(seen) == 0 {
		b.WriteString(Placeholder + eol)
	}

	b.WriteString(HeadingCondensed + eol)
	if c := strings.TrimSpace(cleanText(condensed)); c != "" {
		b.WriteString(escapeLines(c, eol))
	} else {
		b.WriteString(Placeholder + eol)
	}

	b.WriteString(HeadingRecent + eol)
	if rb := closeBlock(cleanText(recentBody), 0, eol); rb != "" {
		b.WriteString(rb)
		if !strings.HasSuffix(rb, "\n") {
			b.WriteString(endLine(rb, eol))
		}
	}
	for i, s := range recent {
		raw := sectionRaw(s, eol)
		if i < len(recent)-1 {
			raw = closeBlock(raw, len(firstLine(raw)), eol)
			if !strings.HasSuffix(raw, "\n") {
				raw += endLine(raw, eol)
			}
		}
		b.WriteString(raw)
	}
	return []byte(b.String())
}

// sectionRaw returns s.Raw, cleaned, making sure it starts with a heading
// line (a hand-built Section may have only Heading, or a Raw without it).
func sectionRaw(s Section, eol string) string {
	raw := cleanText(s.Raw)
	if raw != "" && isHeading(trimEOL(firstLine(raw))) {
		return raw
	}
	head := "## " + oneLine(cleanText(s.Heading)) + eol
	if raw == "" {
		return head
	}
	return closeBlock(head+raw, len(head), eol)
}

// escapeLines renders untrusted text as body lines: line breaks ("\n",
// "\r\n", lone "\r") become eol, every line is terminated, a line that would
// be a heading outside a fence gets a "\" in front, and a fence left open is
// closed.
// EscapeBody makes untrusted text safe as section body, exactly as
// AppendSection does for a remembered note: a line that would parse as a
// "## " heading is escaped as "\## …", a code fence left open is closed,
// line endings become "\n" and one trailing newline is dropped. Importers
// use it per block of text, so that one block's open fence cannot swallow
// the next.
func EscapeBody(text string) string { return escapeLines(text, "\n") }

func escapeLines(text, eol string) string {
	if text == "" {
		return ""
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimSuffix(text, "\n")
	var b strings.Builder
	var fs mdfence.State
	for _, line := range strings.Split(text, "\n") {
		if !fs.Open() && isHeading(line) {
			b.WriteByte('\\')
		} else {
			fs.Step(line)
		}
		b.WriteString(line)
		b.WriteString(eol)
	}
	if fs.Open() {
		b.WriteString(fs.Closer() + eol)
	}
	return b.String()
}

// closeBlock makes text, from byte offset from on, safe to place before
// other sections while keeping its bytes: heading lines outside fences get a
// "\" in front and an unclosed fence is closed. Unchanged text is returned
// as is.
func closeBlock(text string, from int, eol string) string {
	var b strings.Builder
	var fs mdfence.State
	last, changed := 0, false
	for off := from; off < len(text); {
		end := lineEnd(text, off)
		lineStart := off
		if off == 0 && strings.HasPrefix(text, bom) {
			lineStart = len(bom)
		}
		content := trimEOL(text[lineStart:end])
		if !fs.Open() && isHeading(content) {
			b.WriteString(text[last:lineStart])
			b.WriteByte('\\')
			last, changed = lineStart, true
		} else {
			fs.Step(content)
		}
		off = end
	}
	if !changed && !fs.Open() {
		return text
	}
	b.WriteString(text[last:])
	if fs.Open() {
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteString(endLine(text, eol))
		}
		b.WriteString(fs.Closer() + eol)
	}
	return b.String()
}

// endLine is what completes text's unterminated last line: after a lone
// "\r" only "\n", so that the line reads as the CRLF it was cut from
// (appending a whole eol would leave "\r\r\n"), else eol.
func endLine(text, eol string) string {
	if strings.HasSuffix(text, "\r") {
		return "\n"
	}
	return eol
}

// eolOf returns the line ending of text's first line, or def if it has none.
// A text of one line ending in a lone "\r" counts as CRLF: completing that
// line (endLine) makes it one, and the rest of the file must follow it, or
// a rebuilt file would change its line endings on the next rebuild.
func eolOf(text, def string) string {
	i := strings.IndexByte(text, '\n')
	switch {
	case i < 0 && strings.HasSuffix(text, "\r"):
		return "\r\n"
	case i < 0:
		return def
	case i > 0 && text[i-1] == '\r':
		return "\r\n"
	default:
		return "\n"
	}
}

// cleanText makes arbitrary text storable: invalid UTF-8 becomes U+FFFD and
// NUL bytes are dropped.
func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// oneLine turns line breaks into spaces.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
