package app

import (
	"context"
	"strings"

	"github.com/hivemem/hivemem/internal/memfile"
)

// The regions of a memory file, as every front end names them.
const (
	RegionHeader    = "header"    // the lines before the first section
	RegionPinned    = "pinned"    // durable facts, never condensed
	RegionCondensed = "condensed" // the rolling summary of evicted sections
	// RegionRecent holds the "## Recent" marker and every ordinary
	// section, wherever it stands: in a condensed file the sections kept
	// verbatim, in a file never condensed all of them (what the status
	// counts as sections and what a condensation keeps or evicts).
	RegionRecent = "recent"
)

// Memory is an agent's memory file as read and parsed into its regions:
// the one region model behind the API's memory view, the dashboard's
// viewer and MCP memory_read.
type Memory struct {
	Agent       string          `json:"agent"`
	Source      string          `json:"source"` // path relative to the home
	Bytes       int64           `json:"bytes"`
	SHA256      string          `json:"sha256"` // pass as if_match to condense
	Lines       int             `json:"lines"`
	Raw         string          `json:"raw"`
	Header      string          `json:"header"`
	HeaderLines int             `json:"header_lines"`
	Sections    []MemorySection `json:"sections"`
	Pinned      []string        `json:"pinned"`
	Condensed   string          `json:"condensed"`
	ParseError  string          `json:"parse_error,omitempty"`
}

// MemorySection is one "## " section. Kind is the memfile kind (section,
// pinned, condensed, recent: the marker); Region is where it stands
// (RegionPinned, RegionCondensed or RegionRecent).
type MemorySection struct {
	Kind      string `json:"kind"`
	Region    string `json:"region"`
	Heading   string `json:"heading"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Date      string `json:"date,omitempty"`
	Raw       string `json:"raw"`
	// SupersededBy is the heading of the section that replaces this one
	// ("> superseded by:" in the file), "" for a current section.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Body is Raw without its heading line.
	Body string `json:"-"`
}

// Marker reports whether s is the "## Recent" marker itself.
func (s MemorySection) Marker() bool { return s.Kind == memfile.KindRecent.String() }

// Ordinary reports whether s is a section an agent wrote (no region
// heading).
func (s MemorySection) Ordinary() bool { return s.Kind == memfile.KindSection.String() }

// Memory reads the agent's memory file (ReadMemory: a bad id is
// ErrInvalid, an agent without a file ErrNotFound) and parses it into its
// regions. A file that does not parse is returned raw, with ParseError.
func (a *App) Memory(ctx context.Context, r MemoryRequest) (Memory, error) {
	f, err := a.ReadMemory(ctx, r)
	if err != nil {
		return Memory{}, err
	}
	return MemoryOf(f), nil
}

// MemoryOf parses a file read as a memory file (an agent's memory.md, an
// archive or a session file) into its regions.
func MemoryOf(f MemoryFile) Memory {
	m := Memory{
		Agent: f.Agent, Source: f.Source, Bytes: int64(len(f.Data)), SHA256: SHA256(f.Data),
		Lines: countLines(string(f.Data)), Raw: string(f.Data), Sections: []MemorySection{}, Pinned: []string{},
	}
	mf, err := memfile.Parse(f.Data)
	if err != nil {
		m.ParseError = err.Error()
		return m
	}
	m.Header, m.HeaderLines = mf.Header, mf.HeaderLines
	m.Pinned = append(m.Pinned, mf.Pinned()...)
	m.Condensed = mf.Condensed()
	for _, s := range mf.Sections {
		m.Sections = append(m.Sections, MemorySection{
			Kind: s.Kind.String(), Region: regionOf(s.Kind), Heading: s.Heading,
			StartLine: s.StartLine, EndLine: s.EndLine, Date: s.Date, Raw: s.Raw, SupersededBy: s.SupersededBy,
			Body: s.Body(),
		})
	}
	return m
}

// regionOf is the region a section of kind k stands in.
func regionOf(k memfile.Kind) string {
	switch k {
	case memfile.KindPinned:
		return RegionPinned
	case memfile.KindCondensed:
		return RegionCondensed
	}
	return RegionRecent
}

// RegionText concatenates the sections of region (pinned, condensed or
// recent; duplicate regions merged, in file order) and returns the line
// of the first, 0 when the region is empty. RegionHeader is the header.
func (m Memory) RegionText(region string) (string, int) {
	if region == RegionHeader {
		if m.Header == "" {
			return "", 0
		}
		return m.Header, 1
	}
	var b strings.Builder
	start := 0
	for _, s := range m.Sections {
		if s.Region != region {
			continue
		}
		if start == 0 {
			start = s.StartLine
		}
		b.WriteString(s.Raw)
	}
	return b.String(), start
}

// countLines counts lines as memfile numbers them: only "\n" ends one,
// and a last line without it still counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
