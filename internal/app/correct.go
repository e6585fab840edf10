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
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
)

// Duplicate names the note a new one repeats (see internal/dedup): the
// write was refused and nothing was written.
type Duplicate struct {
	Of      string  `json:"of" jsonschema:"drawer id of the note the agent already has (its heading, or the fact, when it is not indexed yet)"`
	Heading string  `json:"heading,omitempty" jsonschema:"heading of the section already there"`
	Text    string  `json:"text" jsonschema:"the note or fact already there"`
	Why     string  `json:"why" jsonschema:"identical, same words or paraphrase"`
	Cosine  float64 `json:"cosine,omitempty"`
}

// checkRef validates a section reference (a drawer id or a heading).
func checkRef(what, ref string) error {
	if err := palace.CheckText(what, ref, 400); err != nil {
		return palace.BadQuery(err)
	}
	if strings.ContainsAny(ref, "\r\n") {
		return palace.BadQuery(fmt.Errorf("%s must be one line", what))
	}
	if strings.TrimSpace(ref) == "" {
		return palace.BadQuery(fmt.Errorf("%s is empty", what))
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
	ds, err := a.Store.Get(ctx, []string{ref})
	if err != nil {
		return "", err
	}
	if len(ds) == 0 {
		return "", palace.BadQuery(fmt.Errorf("no drawer %s in the index", ref))
	}
	d := ds[0]
	path, _ := a.Home.MemoryPath(agent)
	if d.Source != a.Home.Rel(path) {
		return "", palace.BadQuery(fmt.Errorf("drawer %s is in %s, not in agent %s's memory file", ref, d.Source, agent))
	}
	switch d.Room {
	case chunk.RoomPinned:
		return "", palace.BadQuery(fmt.Errorf("drawer %s is the pinned facts: unpin the fact instead", ref))
	case chunk.RoomCondensed, chunk.RoomHeader:
		return "", palace.BadQuery(fmt.Errorf("drawer %s is the %s, not a section that can be corrected", ref, d.Room))
	}
	return d.Heading, nil
}

// vectors is the palace's embedder behind its cache, or nil when there
// is none. For an app opened with IndexLater the index is opened only
// when a comparison needs vectors, so that a repeat check never stops a
// note from being saved (the note first, the index after); without an
// index the comparison is by words only.
func (a *App) vectors() dedup.Vectors {
	switch a.Config.Embedder.Provider {
	case "none":
		return nil
	case "auto":
		if !ModelInstalled(ModelDir(a.Config)) {
			return nil
		}
	}
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		if err := a.index(ctx); err != nil || a.Palace == nil || a.Palace.Embedder() == nil {
			return nil, nil
		}
		return a.Palace.TextVectors(ctx, texts)
	}
}

// noteText is a section's body as dedup compares it: the note as it was
// written (memfile's Note: the supersession markers at its start left
// out; a quoted marker-like line further down is the note's text), trimmed.
func noteText(s memfile.Section) string {
	return strings.TrimSpace(s.Note())
}

// findDuplicate looks for a note of agent that text repeats: a current
// section (facts false) or a pinned fact (facts true), except skip (the
// section or fact being replaced). nil when there is none.
func (a *App) findDuplicate(ctx context.Context, agent, text string, facts bool, skip string) (*Duplicate, error) {
	path, _ := a.Home.MemoryPath(agent)
	f, err := a.parseMemory(path)
	if err != nil {
		return nil, nil // no file yet (or unreadable: the write says why)
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
	m, ok, err := dedup.Find(ctx, a.vectors(), strings.TrimSpace(text), cands)
	if err != nil {
		a.Log.Warn("duplicate check: comparing by meaning failed, compared by words only", "agent", agent, "err", err)
		m, ok, _ = dedup.Find(ctx, nil, strings.TrimSpace(text), cands)
	}
	if !ok {
		return nil, nil
	}
	d := &Duplicate{Of: m.Ref, Text: m.Text, Why: m.Why}
	if m.Cosine > 0 {
		d.Cosine = m.Cosine
	}
	if !facts {
		d.Heading = m.Ref
	}
	// The drawer id, when the index has the file as it is.
	if a.index(ctx) == nil && a.Store != nil {
		if ds, err := a.Store.Drawers(ctx, a.Home.Rel(path)); err == nil {
			for _, dr := range ds {
				if facts && dr.Room == chunk.RoomPinned && strings.Contains(dr.Text, m.Text) ||
					!facts && dr.LineStart == sections[m.Ref].StartLine && dr.Heading == m.Ref {
					d.Of = dr.ID
					break
				}
			}
		}
	}
	return d, nil
}

// event logs an event of this app; a failure to log is a warning.
func (a *App) event(typ, agent string, data map[string]any) {
	if err := a.Events.Append(eventlog.Event{Kind: typ, Agent: agent, Data: data}); err != nil {
		a.Log.Warn("cannot log event", "type", typ, "agent", agent, "err", err)
	}
}

// reflectorFor is the reflector, once the index (which builds it) is open.
func (a *App) reflectorFor(ctx context.Context) (*reflector.Reflector, error) {
	if err := a.index(ctx); err != nil {
		return nil, err
	}
	if a.Reflector == nil {
		return nil, errors.New("no reflector in this process")
	}
	return a.Reflector, nil
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
	return a.Home.Rel(written[len(written)-1]), nil
}
