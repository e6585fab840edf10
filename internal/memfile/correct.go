package memfile

import (
	"errors"
	"fmt"
	"strings"
)

// Supersession markers. A section that a later one replaces starts its
// body with a quoted line naming the section that replaces it, and the
// replacing section starts its body with one naming the section it
// replaces, so that a person reading the file sees both:
//
//	## 2026-11-02 — deploy command
//	> superseded by: 2026-12-01 — deploy command
//	Deploy with `make deploy`.
//	...
//	## 2026-12-01 — deploy command
//	> supersedes: 2026-11-02 — deploy command
//	Deploy with `make release`.
//
// A marker counts only among the first lines of a section's body (before
// any other non-blank line), and names a section by its heading, without
// the "## ". The keyword is matched without regard to case.
const (
	SupersededByMarker = "> superseded by: "
	SupersedesMarker   = "> supersedes: "
)

// parseMarkers reads the supersession markers at the start of a section's
// body, and gives the offset in body of its first other non-blank line
// (len(body) for none).
func parseMarkers(body string) (supersededBy, supersedes string, textAt int) {
	for off := 0; off < len(body); {
		end := lineEnd(body, off)
		c := strings.TrimSpace(trimEOL(body[off:end]))
		if c != "" {
			if v, ok := markerValue(c, SupersededByMarker); ok {
				if supersededBy == "" {
					supersededBy = v
				}
			} else if v, ok := markerValue(c, SupersedesMarker); ok {
				if supersedes == "" {
					supersedes = v
				}
			} else {
				return supersededBy, supersedes, off
			}
		}
		off = end
	}
	return supersededBy, supersedes, len(body)
}

// Note returns the section's body from its first line that is neither
// blank nor a supersession marker: the note as it was written.
func (s Section) Note() string {
	body := s.Body()
	_, _, at := parseMarkers(body)
	return body[at:]
}

// SupersededNote returns the section's body without the "> superseded
// by:" lines (and blank lines among them) at its start, and the number of
// lines left out: the section as it read before a later one replaced it,
// so that marking it changes no drawer's text (nor its id).
func (s Section) SupersededNote() (body string, skipped int) {
	body = s.Body()
	for off := 0; off < len(body); {
		end := lineEnd(body, off)
		c := strings.TrimSpace(trimEOL(body[off:end]))
		if c != "" {
			if _, ok := markerValue(c, SupersededByMarker); !ok {
				return body[off:], skipped
			}
		}
		skipped++
		off = end
	}
	return "", skipped
}

// markerValue returns what follows marker in line (trimmed, not empty).
func markerValue(line, marker string) (string, bool) {
	m := strings.TrimSpace(marker)
	if len(line) < len(m) || !strings.EqualFold(line[:len(m)], m) {
		return "", false
	}
	v := strings.TrimSpace(line[len(m):])
	return v, v != ""
}

// FindSection returns the index in f.Sections of the one ordinary section
// that ref names: its heading exactly (surrounding spaces ignored), else
// its heading after the date ("deploy command" for "2026-11-02 — deploy
// command"). No section, or more than one, is an error that says which.
func (f *File) FindSection(ref string) (int, error) {
	ref = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ref), "## "))
	if ref == "" {
		return -1, errors.New("no section named: the heading is empty")
	}
	match := func(same func(h string) bool) []int {
		var at []int
		for i, s := range f.Sections {
			if s.Kind == KindSection && same(strings.TrimSpace(s.Heading)) {
				at = append(at, i)
			}
		}
		return at
	}
	at := match(func(h string) bool { return h == ref })
	if len(at) == 0 {
		at = match(func(h string) bool { return headingTitle(h) == ref })
	}
	switch len(at) {
	case 0:
		return -1, fmt.Errorf("no section %q in the file", ref)
	case 1:
		return at[0], nil
	}
	lines := make([]string, len(at))
	for i, k := range at {
		lines[i] = fmt.Sprintf("line %d", f.Sections[k].StartLine)
	}
	return -1, fmt.Errorf("%d sections are headed %q (%s): give the full heading or a drawer id", len(at), ref, strings.Join(lines, ", "))
}

// headingTitle is a heading without a leading date and dash ("2026-11-02 —
// x" gives "x"); a heading without one is returned as it is.
func headingTitle(h string) string {
	if len(h) < 10 || findDate(h[:10]) == "" {
		return h
	}
	rest := strings.TrimSpace(h[10:])
	for _, dash := range []string{"—", "–", "-", ":"} {
		if r, ok := strings.CutPrefix(rest, dash); ok {
			return strings.TrimSpace(r)
		}
	}
	return h
}

// checkRef validates the heading a marker names: one line of text.
func checkRef(ref string) error {
	if err := checkText(ref); err != nil {
		return err
	}
	if strings.ContainsAny(ref, "\r\n") {
		return errors.New("a heading must be one line")
	}
	if strings.TrimSpace(ref) == "" {
		return errors.New("the heading is empty")
	}
	return nil
}

// Supersede appends a new section ("## heading", then body) that replaces
// the section ref names (see FindSection), in one edit: the new section
// starts with a "> supersedes:" line naming the old one, and the old one
// gets a "> superseded by:" line under its heading (replacing the one it
// had, if it was superseded before). The old section's text is kept. It
// returns the new file and the old section's heading.
func Supersede(data []byte, ref, heading, body string) ([]byte, string, error) {
	out, old, _, err := SupersedeSection(data, ref, heading, body)
	return out, old.Heading, err
}

// SupersedeSection is Supersede that returns both sections as the new
// file parses: the old one (now marked) and the one appended.
func SupersedeSection(data []byte, ref, heading, body string) (out []byte, old, added Section, err error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: supersede: existing file: %w", err)
	}
	if err := checkHeading(heading); err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: supersede: %w", err)
	}
	f := parseText(text)
	i, err := f.FindSection(ref)
	if err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: supersede: %w", err)
	}
	was := f.Sections[i].Heading
	marked, err := markSection(f, i, SupersededByMarker+strings.TrimSpace(heading))
	if err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: supersede: %w", err)
	}
	out, added, err = AppendNewSection(marked, heading, SupersedesMarker+strings.TrimSpace(was)+"\n"+body)
	if err != nil {
		return nil, Section{}, Section{}, err
	}
	// Marking and appending keep the sections before the new one in
	// place (both check it), so the old one is still the i-th.
	return out, parseText(string(out)).Sections[i], added, nil
}

// MarkSuperseded marks the section ref names (see FindSection) as
// replaced by the section by names, which the file already has and which
// comes after it: the old section gets a "> superseded by:" line under
// its heading; nothing else changes. It returns the new file and both
// sections as it parses.
func MarkSuperseded(data []byte, ref, by string) (out []byte, old, current Section, err error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: mark superseded: existing file: %w", err)
	}
	f := parseText(text)
	i, err := f.FindSection(ref)
	if err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: mark superseded: %w", err)
	}
	j, err := f.FindSection(by)
	if err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: mark superseded: %w", err)
	}
	if j <= i {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: mark superseded: %q does not come after %q", f.Sections[j].Heading, f.Sections[i].Heading)
	}
	out, err = markSection(f, i, SupersededByMarker+strings.TrimSpace(f.Sections[j].Heading))
	if err != nil {
		return nil, Section{}, Section{}, fmt.Errorf("memfile: mark superseded: %w", err)
	}
	g := parseText(string(out))
	return out, g.Sections[i], g.Sections[j], nil
}

// markSection puts line under section i's heading, in place of a
// superseded-by marker it has.
func markSection(f *File, i int, line string) ([]byte, error) {
	if err := checkRef(line); err != nil {
		return nil, err
	}
	s := f.Sections[i]
	eol := eolOf(s.Raw, eolOf(f.Header, "\n"))
	head := firstLine(s.Raw)
	if !strings.HasSuffix(head, "\n") {
		// A heading on the file's last line, without a newline.
		head += endLine(head, eol)
	}
	body := s.Body()
	// Drop the marker it had, among the leading marker lines.
	var kept strings.Builder
	leading := true
	forLines(body, func(l string) {
		c := strings.TrimSpace(trimEOL(l))
		if leading {
			if _, ok := markerValue(c, SupersededByMarker); ok {
				return
			}
			if _, ok := markerValue(c, SupersedesMarker); !ok && c != "" {
				leading = false
			}
		}
		kept.WriteString(l)
	})
	sections := append([]Section(nil), f.Sections...)
	sections[i].Raw = head + line + eol + kept.String()
	g := &File{Header: f.Header, Sections: sections}
	out := g.Render()
	h := parseText(string(out))
	if len(h.Sections) != len(f.Sections) || h.Sections[i].SupersededBy == "" {
		return nil, fmt.Errorf("marking section %q changed the file's structure (please report this bug)", s.Heading)
	}
	return out, nil
}

// RemoveSection removes the section ref names (see FindSection) and returns
// the new file and the section removed. Every other byte is kept; when the
// section before it lacked a final newline nothing changes there, since a
// section only ends at the next heading.
func RemoveSection(data []byte, ref string) ([]byte, Section, error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, Section{}, fmt.Errorf("memfile: remove section: existing file: %w", err)
	}
	f := parseText(text)
	i, err := f.FindSection(ref)
	if err != nil {
		return nil, Section{}, fmt.Errorf("memfile: remove section: %w", err)
	}
	s := f.Sections[i]
	g := &File{Header: f.Header, Sections: append(append([]Section(nil), f.Sections[:i]...), f.Sections[i+1:]...)}
	out := string(g.Render())
	// The section before it may have ended without a newline only if it
	// was the file's last; a removed last section leaves the rest as it
	// was. A fence left open by the previous section cannot be: the
	// removed heading would have been code.
	if n := len(parseText(out).Sections); n != len(f.Sections)-1 {
		return nil, Section{}, fmt.Errorf("memfile: remove section %q: result has %d sections, want %d (please report this bug)", s.Heading, n, len(f.Sections)-1)
	}
	return []byte(out), s, nil
}

// Line is one line of a file: its 1-based number, its text without line
// ending, and the heading of the section it is in ("" in the header).
type Line struct {
	Number  int    `json:"line"`
	Text    string `json:"text"`
	Heading string `json:"heading,omitempty"`
}

// RemoveLine removes the one line that contains needle, searched in the
// section ref names, or in the whole file when ref is "". A heading line
// cannot be removed this way (forget the section instead), nor can a
// needle that matches several lines: the error lists them.
func RemoveLine(data []byte, ref, needle string) ([]byte, Line, error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, Line{}, fmt.Errorf("memfile: remove line: existing file: %w", err)
	}
	if strings.TrimSpace(needle) == "" || strings.ContainsAny(needle, "\r\n") {
		return nil, Line{}, errors.New("memfile: remove line: give the text of one line (not empty, no line break)")
	}
	f := parseText(text)
	lines := f.linesContaining(needle, func(string) bool { return true })
	if ref != "" {
		i, err := f.FindSection(ref)
		if err != nil {
			return nil, Line{}, fmt.Errorf("memfile: remove line: %w", err)
		}
		s := f.Sections[i]
		var in []lineAt
		for _, l := range lines {
			if l.Number >= s.StartLine && l.Number <= s.EndLine {
				in = append(in, l)
			}
		}
		lines = in
	}
	switch {
	case len(lines) == 0 && ref != "":
		return nil, Line{}, fmt.Errorf("memfile: remove line: no line of section %q contains %q", ref, needle)
	case len(lines) == 0:
		return nil, Line{}, fmt.Errorf("memfile: remove line: no line contains %q", needle)
	case len(lines) > 1:
		nums := make([]string, len(lines))
		for i, l := range lines {
			nums[i] = fmt.Sprint(l.Number)
		}
		return nil, Line{}, fmt.Errorf("memfile: remove line: %d lines contain %q (lines %s): give more of the line, or the section", len(lines), needle, strings.Join(nums, ", "))
	}
	l := lines[0]
	if l.heading {
		return nil, Line{}, fmt.Errorf("memfile: remove line: line %d is the heading of section %q: forget the section instead", l.Number, l.Heading)
	}
	out := text[:l.start] + text[l.end:]
	if n := len(parseText(out).Sections); n != len(f.Sections) {
		return nil, Line{}, fmt.Errorf("memfile: remove line %d: the file's sections would change (%d, was %d): the line opens or closes a code block; forget the section instead", l.Number, n, len(f.Sections))
	}
	return []byte(out), l.Line, nil
}

// lineAt is a line with its byte range in the file.
type lineAt struct {
	Line
	start, end int
	heading    bool
}

// linesContaining lists the lines of f that contain needle and pass keep.
func (f *File) linesContaining(needle string, keep func(string) bool) []lineAt {
	var out []lineAt
	off, n := 0, 0
	scan := func(s, heading string, first bool) {
		isHead := first
		forLines(s, func(l string) {
			n++
			c := trimEOL(l)
			if strings.Contains(c, needle) && keep(c) {
				out = append(out, lineAt{Line: Line{Number: n, Text: c, Heading: heading}, start: off, end: off + len(l), heading: isHead})
			}
			isHead = false
			off += len(l)
		})
	}
	scan(f.Header, "", false)
	for _, s := range f.Sections {
		scan(s.Raw, s.Heading, true)
	}
	return out
}

// RemoveLinesContaining removes every line of data that contains needle,
// whatever it is (a heading too: the section's body then joins the one
// before). It is for purging a secret out of copies (archive, backups),
// where no line of it may stay. It returns the new bytes and how many
// lines went.
func RemoveLinesContaining(data []byte, needle string) ([]byte, int) {
	if needle == "" {
		return data, 0
	}
	text := string(data)
	var b strings.Builder
	n := 0
	forLines(text, func(l string) {
		if strings.Contains(l, needle) {
			n++
			return
		}
		b.WriteString(l)
	})
	if n == 0 {
		return data, 0
	}
	return []byte(b.String()), n
}

// ErrNotPinned is the error of RemovePinned and ReplacePinned for a fact
// the file does not pin.
var ErrNotPinned = errors.New("not a pinned fact")

// RemovePinned removes fact (matched by NormalizeFact) from the file: its
// line in a pinned region, or a 📌 line anywhere. A pinned region left
// without facts gets the placeholder back. It returns the new file and the
// fact as it stood; a fact not pinned is an error.
func RemovePinned(data []byte, fact string) ([]byte, string, error) {
	out, old, err := replacePinned(data, fact, "")
	if err != nil {
		return nil, "", fmt.Errorf("memfile: unpin: %w", err)
	}
	return out, old, nil
}

// ReplacePinned puts the fact with in place of the pinned fact old
// (matched by NormalizeFact), on the same line; when with is pinned
// already, old's line is removed instead. It returns the new file and old
// as it stood.
func ReplacePinned(data []byte, old, with string) ([]byte, string, error) {
	display, ok := factFromLine(with)
	if !ok || strings.ContainsAny(with, "\r\n") || checkText(with) != nil {
		return nil, "", fmt.Errorf("memfile: replace pinned fact: %q is not a one-line fact", with)
	}
	out, was, err := replacePinned(data, old, display)
	if err != nil {
		return nil, "", fmt.Errorf("memfile: replace pinned fact: %w", err)
	}
	return out, was, nil
}

func replacePinned(data []byte, fact, with string) ([]byte, string, error) {
	text := string(data)
	if err := checkText(text); err != nil {
		return nil, "", fmt.Errorf("existing file: %w", err)
	}
	key := NormalizeFact(fact)
	if key == "" || strings.ContainsAny(fact, "\r\n") {
		return nil, "", fmt.Errorf("%q is not a one-line fact", fact)
	}
	f := parseText(text)
	if with != "" {
		for _, p := range f.Pinned() {
			if NormalizeFact(p) == NormalizeFact(with) && NormalizeFact(with) != key {
				with = "" // already pinned: only the old one goes
			}
		}
	}
	// Find the fact's lines: in a pinned region, or a 📌 line anywhere.
	// Pinned reads every line of a pinned region and every 📌 line
	// anywhere, code fences or not: so does this.
	var hits []lineAt
	var regionOf []int // the section of each hit; -1 for the header
	var inRegion []bool
	off, n := 0, 0
	scan := func(s string, section int, region, first bool) {
		isHead := first
		forLines(s, func(l string) {
			n++
			if !isHead && (region || isPinnedLine(l)) {
				if got, ok := factFromLine(l); ok && NormalizeFact(got) == key {
					hits = append(hits, lineAt{Line: Line{Number: n, Text: got}, start: off, end: off + len(l)})
					regionOf = append(regionOf, section)
					inRegion = append(inRegion, region)
				}
			}
			isHead = false
			off += len(l)
		})
	}
	scan(f.Header, -1, false, false)
	for i, s := range f.Sections {
		scan(s.Raw, i, s.Kind == KindPinned, true)
	}
	if len(hits) == 0 {
		return nil, "", fmt.Errorf("%q is %w of this file", fact, ErrNotPinned)
	}
	// Every copy goes (duplicate regions are merged on read); the first
	// takes the replacement.
	var b strings.Builder
	last := 0
	for k, h := range hits {
		b.WriteString(text[last:h.start])
		if k == 0 && with != "" {
			line := text[h.start:h.end]
			content := trimEOL(line)
			indent := content[:len(content)-len(strings.TrimLeft(content, " \t"))]
			repl := with
			if !inRegion[k] && !isPinnedLine(repl) {
				repl = pin + " " + repl // outside a region only a 📌 line is pinned
			}
			b.WriteString(indent + "- " + repl + line[len(content):])
		}
		last = h.end
	}
	b.WriteString(text[last:])
	out := b.String()
	// A pinned region left empty gets its placeholder back.
	g := parseText(out)
	for i, s := range g.Sections {
		if s.Kind != KindPinned || !IsPlaceholderBody(s.Body()) || strings.Contains(s.Body(), Placeholder) {
			continue
		}
		touched := false
		for _, r := range regionOf {
			touched = touched || r == i
		}
		if !touched {
			continue
		}
		eol := eolOf(s.Raw, "\n")
		head := firstLine(s.Raw)
		if !strings.HasSuffix(head, "\n") {
			head += endLine(head, eol)
		}
		g.Sections[i].Raw = head + Placeholder + eol + s.Body()
		out = string(g.Render())
		g = parseText(out)
	}
	for _, p := range g.Pinned() {
		if NormalizeFact(p) == key {
			return nil, "", fmt.Errorf("%q is still pinned after removing it (please report this bug)", fact)
		}
	}
	return []byte(out), hits[0].Text, nil
}
