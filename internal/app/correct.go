package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/dedup"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/reflector"
)

// Duplicate names the note a new one repeats (see internal/dedup): the
// write was refused and nothing was written.
type Duplicate struct {
	Of      string `json:"of" jsonschema:"drawer id of the note the agent already has (its heading, or the fact, when it is not indexed yet)"`
	Heading string `json:"heading,omitempty" jsonschema:"heading of the section already there"`
	Text    string `json:"text" jsonschema:"the note or fact already there"`
	Why     string `json:"why" jsonschema:"identical or same words"`
}

// Restated names an older note whose subject a note just written states
// again with something changed (see dedup.Restates): the new note is
// written; the older one stays current until the agent marks it replaced
// (remember --supersedes, pin --replaces).
type Restated struct {
	Of      string `json:"of" jsonschema:"drawer id of the older note (its heading, or the fact, when it is not indexed yet): pass it to supersedes (or the fact to replaces) if the new note replaces it"`
	Heading string `json:"heading,omitempty" jsonschema:"heading of the older section"`
	Text    string `json:"text" jsonschema:"the older note or fact"`

	fact      bool // a pinned fact
	startLine int  // the section's heading line
}

// checkRef validates a section reference (a drawer id or a heading).
func checkRef(what, ref string) error {
	if err := memfile.CheckText(what, ref, 400); err != nil {
		return invalid(err)
	}
	if strings.ContainsAny(ref, "\r\n") {
		return invalid(fmt.Errorf("%s must be one line", what))
	}
	if strings.TrimSpace(ref) == "" {
		return invalid(fmt.Errorf("%s is empty", what))
	}
	return nil
}

// drawerIDRE is what a drawer id looks like (palace.drawers).
var drawerIDRE = regexp.MustCompile(`^[0-9a-f]{20}(-[0-9]+)?$`)

// sectionRef turns a reference to a section of agent's memory file — a
// drawer id or a heading — into the heading memfile.FindSection takes. A
// drawer of another file (another agent's, an archive) is refused: the
// scope of a correction is the agent's own memory file.
func (a *App) sectionRef(ctx context.Context, agent, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if !drawerIDRE.MatchString(ref) {
		return ref, nil
	}
	if err := a.index(ctx); err != nil {
		return "", fmt.Errorf("drawer %s: the index is needed to find it (%w); name the section by its heading instead", ref, err)
	}
	ds, err := a.store.Get(ctx, []string{ref})
	if err != nil {
		return "", err
	}
	if len(ds) == 0 {
		return "", invalid(fmt.Errorf("no drawer %s in the index", ref))
	}
	d := ds[0]
	path, _ := a.home.MemoryPath(agent)
	if d.Source != a.home.Rel(path) {
		return "", invalid(fmt.Errorf("drawer %s is in %s, not in agent %s's memory file", ref, d.Source, agent))
	}
	switch d.Room {
	case chunk.RoomPinned:
		return "", invalid(fmt.Errorf("drawer %s is the pinned facts: unpin the fact instead", ref))
	case chunk.RoomCondensed, chunk.RoomHeader:
		return "", invalid(fmt.Errorf("drawer %s is the %s, not a section that can be corrected", ref, d.Room))
	}
	return d.Heading, nil
}

// noteText is a section's body as dedup compares it: the note as it was
// written (memfile's Note: the supersession markers at its start left
// out; a quoted marker-like line further down is the note's text), trimmed.
func noteText(s memfile.Section) string {
	return strings.TrimSpace(s.Note())
}

// findDuplicate looks for a note of agent that text repeats: a current
// section (facts false) or a pinned fact (facts true), except skip (the
// section or fact being replaced). dup is nil when there is none; then
// restated is the note whose subject text restates with something
// changed (nil for none), which the write reports so that the agent can
// mark it replaced.
func (a *App) findDuplicate(ctx context.Context, agent, text string, facts bool, skip string) (dup *Duplicate, restated *Restated, err error) {
	path, _ := a.home.MemoryPath(agent)
	f, err := a.parseMemory(path)
	if err != nil {
		return nil, nil, nil // no file yet (or unreadable: the write says why)
	}
	var cands []dedup.Candidate
	sections := map[string]memfile.Section{}
	if facts {
		for _, p := range f.Pinned() {
			if skip == "" || memfile.NormalizeFact(p) != memfile.NormalizeFact(skip) {
				cands = append(cands, dedup.Candidate{Ref: p, Text: p})
			}
		}
	} else {
		skipHeading := ""
		if i, err := f.FindSection(skip); skip != "" && err == nil {
			skipHeading = f.Sections[i].Heading
		}
		for _, s := range f.Recent() {
			if s.SupersededBy != "" || skipHeading != "" && s.Heading == skipHeading {
				continue // an outdated note (saying it again is not a repeat of what is current), or the one replaced
			}
			if t := noteText(s); t != "" {
				cands = append(cands, dedup.Candidate{Ref: s.Heading, Text: t})
				sections[s.Heading] = s
			}
		}
	}
	text = strings.TrimSpace(text)
	if m, ok := dedup.Find(text, cands); ok {
		d := &Duplicate{Of: a.noteID(ctx, path, facts, m.Ref, m.Text, sections[m.Ref].StartLine), Text: m.Text, Why: m.Why}
		if !facts {
			d.Heading = m.Ref
		}
		return d, nil, nil
	}
	if skip != "" {
		return nil, nil, nil // the note says what it replaces
	}
	if c, ok := dedup.Restates(text, cands); ok {
		// Its drawer id is looked up after the write (resolve): the note
		// first, the index after.
		r := &Restated{Of: c.Ref, Text: c.Text, fact: facts, startLine: sections[c.Ref].StartLine}
		if !facts {
			r.Heading = c.Ref
		}
		return nil, r, nil
	}
	return nil, nil, nil
}

// noteID is the drawer id of a note of the memory file at path — a
// pinned fact (text) when facts, else the section ref (a heading) that
// starts at line — when the index has the file as it is; else ref.
func (a *App) noteID(ctx context.Context, path string, facts bool, ref, text string, line int) string {
	if a.index(ctx) != nil || a.store == nil {
		return ref
	}
	ds, err := a.store.Drawers(ctx, a.home.Rel(path))
	if err != nil {
		return ref
	}
	for _, dr := range ds {
		if facts && dr.Room == chunk.RoomPinned && strings.Contains(dr.Text, text) ||
			!facts && dr.LineStart == line && dr.Heading == ref {
			return dr.ID
		}
	}
	return ref
}

// resolve sets r's Of to the older note's drawer id, once the file
// written is mined (path: the agent's memory file).
func (r *Restated) resolve(ctx context.Context, a *App, path string) {
	if r == nil || r.fact {
		return // a pinned fact is named by its text, which replaces takes
	}
	r.Of = a.noteID(ctx, path, false, r.Heading, r.Text, r.startLine)
}

// event logs an event of this app; a failure to log is a warning.
func (a *App) event(typ, agent string, data map[string]any) {
	if err := a.events.Append(eventlog.Event{Kind: typ, Agent: agent, Data: data}); err != nil {
		a.log.Warn("cannot log event", "type", typ, "agent", agent, "err", err)
	}
}

// reflectorFor is the reflector, once the index (which builds it) is open.
func (a *App) reflectorFor(ctx context.Context) (*reflector.Reflector, error) {
	if err := a.index(ctx); err != nil {
		return nil, err
	}
	if a.reflector == nil {
		return nil, errors.New("no reflector in this process")
	}
	return a.reflector, nil
}

// archiveFact files a pinned fact that stopped being true on the day of
// now in the agent's archive (searchable history): a section dated that
// day, with the fact and what replaced it (then marked superseded, so
// search leaves it out unless asked). fact and replacedBy are one line
// each (checked), after a "- " or a word: no line can become a heading.
func (a *App) archiveFact(ctx context.Context, r *reflector.Reflector, agent, fact, replacedBy string, now time.Time) (string, error) {
	day := now.UTC().Format("2006-01-02")
	var raw string
	if replacedBy != "" {
		raw = "## " + day + " — pinned fact replaced\n" + memfile.SupersededByMarker + strings.TrimPrefix(memfile.HeadingPinned, "## ") + "\n" +
			"- " + fact + "\n" + "Until " + day + "; replaced by: " + replacedBy + "\n"
	} else {
		raw = "## " + day + " — pinned fact unpinned\n- " + fact + "\nPinned until " + day + ".\n"
	}
	written, err := r.Archive(ctx, agent, []memfile.Section{{Raw: raw}})
	if err != nil {
		return "", err
	}
	if len(written) == 0 {
		return "", nil // the same fact archived the same day already
	}
	return a.home.Rel(written[len(written)-1]), nil
}
