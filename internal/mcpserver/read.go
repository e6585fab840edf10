package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/app"
)

// Regions memory_read accepts: all, or one of the app's region model.
const (
	RegionAll       = "all"
	RegionHeader    = app.RegionHeader
	RegionPinned    = app.RegionPinned
	RegionCondensed = app.RegionCondensed
	RegionRecent    = app.RegionRecent
)

func (s *server) read(ctx context.Context, in ReadInput) (ReadOutput, string, error) {
	if in.Region != "" && in.Section != "" {
		return ReadOutput{}, "", errors.New("give region or section, not both")
	}
	if err := checkName("section", in.Section); err != nil {
		return ReadOutput{}, "", err
	}
	switch in.Region {
	case "", RegionAll, RegionHeader, RegionPinned, RegionCondensed, RegionRecent:
	default:
		return ReadOutput{}, "", fmt.Errorf("unknown region %q (want all, header, pinned, condensed or recent)", in.Region)
	}
	m, err := s.d.App.Memory(ctx, app.MemoryRequest{Agent: in.Agent, Scope: s.scope()})
	if err != nil {
		return ReadOutput{}, "", err
	}
	if m.ParseError != "" {
		return ReadOutput{}, "", fmt.Errorf("read %s: %s", m.Agent, m.ParseError)
	}
	out := ReadOutput{Agent: m.Agent, Source: m.Source, Bytes: int(m.Bytes), Lines: m.Lines,
		Sections: make([]SectionInfo, len(m.Sections))}
	for i, sec := range m.Sections {
		out.Sections[i] = sectionInfo(sec)
	}

	if in.Section != "" {
		sec, inHeader, err := findSection(m, in.Section)
		if err != nil {
			return ReadOutput{}, "", err
		}
		if inHeader {
			out.Region = RegionHeader
			setText(&out, m.Header, 1)
		} else {
			info := sectionInfo(sec)
			out.Section = &info
			setText(&out, sec.Raw, sec.StartLine)
		}
	} else {
		out.Region = in.Region
		if out.Region == "" {
			out.Region = RegionAll
		}
		switch out.Region {
		case RegionAll:
			setText(&out, m.Raw, 1)
		default:
			text, start := m.RegionText(out.Region)
			setText(&out, text, start)
			if out.Region == RegionPinned {
				out.Facts = m.Pinned
			}
		}
	}
	text := out.Text
	if out.Truncated {
		text += fmt.Sprintf("\n… (truncated at %d bytes of %d; read one section to see the rest)\n", len(out.Text), out.Bytes)
	}
	return out, text, nil
}

// sectionInfo is a section's location.
func sectionInfo(s app.MemorySection) SectionInfo {
	return SectionInfo{Heading: s.Heading, Kind: s.Kind, StartLine: s.StartLine, EndLine: s.EndLine, Date: s.Date}
}

// setText stores text (cut to MaxReadBytes at a line boundary) and the
// line range it covers, counted from the file line start.
func setText(out *ReadOutput, text string, start int) {
	if len(text) > MaxReadBytes {
		cut := strings.LastIndexByte(text[:MaxReadBytes], '\n') + 1
		if cut == 0 { // one enormous line: cut at a rune boundary
			cut = MaxReadBytes
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		text, out.Truncated = text[:cut], true
	}
	out.Text = text
	if n := countLines(text); n > 0 {
		out.StartLine, out.EndLine = start, start+n-1
	}
}

// findSection resolves memory_read's section argument: a line number (the
// section holding that line; inHeader when the line is in the header), or
// a heading, matched exactly first, then as a case-insensitive part. An
// ambiguous heading is an error that lists the candidates with their lines.
func findSection(m app.Memory, q string) (sec app.MemorySection, inHeader bool, err error) {
	q = strings.TrimSpace(q)
	if n, err := strconv.Atoi(q); err == nil {
		switch {
		case n < 1 || n > m.Lines:
			return sec, false, fmt.Errorf("line %d is outside the file (1-%d)", n, m.Lines)
		case n <= m.HeaderLines:
			return sec, true, nil
		}
		for _, s := range m.Sections {
			if n >= s.StartLine && n <= s.EndLine {
				return s, false, nil
			}
		}
		return sec, false, fmt.Errorf("line %d is in no section", n)
	}
	q = strings.TrimSpace(strings.TrimPrefix(q, "## "))
	if q == "" {
		return sec, false, errors.New("section is empty: give a heading or a line number")
	}
	var exact, partial []app.MemorySection
	lq := strings.ToLower(q)
	for _, s := range m.Sections {
		h := strings.TrimSpace(s.Heading)
		switch {
		case h == q:
			exact = append(exact, s)
		case strings.Contains(strings.ToLower(h), lq):
			partial = append(partial, s)
		}
	}
	cands := exact
	if len(cands) == 0 {
		cands = partial
	}
	switch len(cands) {
	case 0:
		return sec, false, fmt.Errorf("no section heading matches %q (the file has %d sections; read region all for its table of contents)", q, len(m.Sections))
	case 1:
		return cands[0], false, nil
	}
	var b strings.Builder
	for i, s := range cands {
		if i == 10 {
			fmt.Fprintf(&b, "; and %d more", len(cands)-10)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q at line %d", s.Heading, s.StartLine)
	}
	return sec, false, fmt.Errorf("section %q is ambiguous, %d sections match (%s): pass a line number instead", q, len(cands), b.String())
}

// countLines counts lines as memfile does: only "\n" ends one, and a last
// line without it still counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
