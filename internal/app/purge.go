package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/purge"
	"github.com/hivemem/hivemem/internal/store"
)

// PurgeRequest takes a text out of the whole home: every agent's memory
// file, sessions, archives, forgotten text, backups, the event log,
// set-aside indexes, leftovers of interrupted writes, the index and the
// embedding cache. It is for a secret pasted by mistake.
type PurgeRequest struct {
	Text string `json:"text"`
	// DryRun changes nothing and says where the text stands, as counts.
	DryRun bool `json:"dry_run,omitempty"`
	// LockWait bounds the wait for the palace write lock (0: DefaultLockWait).
	LockWait time.Duration `json:"-"`
	// Scope: a caller bound to its own memory cannot purge the home.
	Scope Scope `json:"-"`
}

// Validate checks the request; every error is ErrInvalid.
func (r PurgeRequest) Validate() error {
	if r.Scope.Caller != "" {
		return invalid(fmt.Errorf("purge: refused: this server acts only for agent %q, and a purge changes every agent's files (use forget --purge on a section of its own memory)", r.Scope.Caller))
	}
	if err := purge.CheckText(r.Text); err != nil {
		return invalid(fmt.Errorf("purge: %w", err))
	}
	return nil
}

// PurgePlace is one file that held the text.
type PurgePlace struct {
	Path    string `json:"path" jsonschema:"relative to the hivemem home"`
	Kind    string `json:"kind" jsonschema:"memory, session, archive, forgotten, backup, event log, set-aside index, leftover or other"`
	Agent   string `json:"agent,omitempty"`
	Found   int    `json:"found" jsonschema:"how many times the text stood there"`
	Removed bool   `json:"removed,omitempty" jsonschema:"the whole file went (a set-aside damaged index)"`
	Renamed bool   `json:"renamed,omitempty" jsonschema:"the file's name held the text: path is its new name"`
}

// PurgeResult says where a purge cleaned (or, for a dry run, would
// clean), never the text: `hivemem purge --json`, the API and MCP
// memory_purge.
type PurgeResult struct {
	DryRun bool `json:"dry_run,omitempty"`
	// Places counts the files cleaned, plus one for the index when it
	// held the text.
	Places int          `json:"places"`
	Files  []PurgePlace `json:"files"`
	// Agents are the agents whose files held the text.
	Agents  []string `json:"agents"`
	Drawers int      `json:"drawers" jsonschema:"index drawers that held the text (removed, or re-mined from the cleaned files)"`
	// Finished counts earlier purges, interrupted, that this one finished.
	Finished int `json:"finished,omitempty"`
	// Left are files that hold the text and that a purge does not change.
	Left []string `json:"left,omitempty" jsonschema:"files that hold the text and that a purge leaves to you (config.toml)"`
	Note string   `json:"note"`
}

// purgeNote is what every purge says about what it cannot reach.
const purgeNote = "the text is on the block list: a later write or import that brings it back is redacted. " +
	"Copies outside this home are not ours to change: the transcripts hooks import from, exports, other machines' homes sharing a palace (run the same purge there)."

// Purge takes r.Text out of the whole home (see PurgeRequest). The intent
// is recorded first (a hash and the length, never the text), so that a
// purge killed at any point is finished by the next purge or the next
// command that opens the home. The text stays on the block list.
func (a *App) Purge(ctx context.Context, r PurgeRequest) (PurgeResult, error) {
	if err := r.Validate(); err != nil {
		return PurgeResult{}, err
	}
	return a.purgeTexts(ctx, []purge.Text{{Text: r.Text}}, r.DryRun, r.LockWait)
}

// purgeTexts records a purge of texts and carries it out with every other
// purge still pending; with dryRun it only looks.
func (a *App) purgeTexts(ctx context.Context, texts []purge.Text, dryRun bool, wait time.Duration) (PurgeResult, error) {
	out := PurgeResult{DryRun: dryRun, Note: purgeNote}
	if dryRun {
		m, err := purge.Ephemeral(texts)
		if err != nil {
			return out, err
		}
		rep, err := purge.ScrubHome(ctx, a.home, m, true)
		out.fill(rep)
		if err != nil {
			return out, err
		}
		if err := a.index(ctx); err == nil && a.store != nil {
			ds, err := a.drawersHolding(ctx, m)
			if err != nil {
				return out, fmt.Errorf("purge: %w", err)
			}
			out.Drawers = len(ds)
			if len(ds) > 0 {
				out.Places++
			}
		}
		return out, nil
	}
	st := purge.Open(a.home.PalaceDir())
	unlock, err := a.purgeLock(ctx, st, wait)
	if err != nil {
		return out, err
	}
	defer unlock()
	before, _ := purge.Load(a.home.PalaceDir())
	for _, r := range before.Purges {
		if !r.Done {
			out.Finished++
		}
	}
	if _, _, err := st.Begin(texts, time.Now()); err != nil {
		return out, fmt.Errorf("purge: record it: %w", err)
	}
	return a.finishPurges(ctx, st, out, wait)
}

// purgeLock takes the home's purge lock, waiting up to wait.
func (a *App) purgeLock(ctx context.Context, st purge.Store, wait time.Duration) (func(), error) {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	unlock, err := st.Lock(lctx)
	if err != nil {
		return nil, kindError{ErrConflict, fmt.Errorf("purge: another purge is running: %w", err)}
	}
	return func() { _ = unlock() }, nil
}

// finishPurges carries out every pending purge (the caller holds the
// purge lock): the files of the home, then the index, then marks them
// done.
func (a *App) finishPurges(ctx context.Context, st purge.Store, out PurgeResult, wait time.Duration) (PurgeResult, error) {
	s, err := purge.Load(a.home.PalaceDir())
	if err != nil {
		return out, err
	}
	m := s.PendingMatcher()
	if m.Empty() {
		return out, st.Finish()
	}
	var recorded []string
	for _, r := range s.Purges {
		if !r.Done {
			recorded = append(recorded, r.Drawers...)
		}
	}
	rep, err := purge.ScrubHome(ctx, a.home, m, false)
	out.fill(rep)
	if err != nil {
		return out, fmt.Errorf("purge: the files are partly clean (run the purge again, or any command finishes it): %w", err)
	}
	n, err := a.purgeIndex(ctx, st, m, recorded, rep, wait)
	out.Drawers = n
	if n > 0 {
		out.Places++
	}
	if err != nil {
		return out, fmt.Errorf("purge: the files are clean, but the index still holds the text (run the purge again, or any command finishes it): %w", err)
	}
	if err := st.Finish(); err != nil {
		return out, fmt.Errorf("purge: %w", err)
	}
	a.event("purge", "", map[string]any{"places": out.Places, "agents": len(out.Agents), "drawers": out.Drawers})
	return out, nil
}

// fill records a scrub's report in the result.
func (out *PurgeResult) fill(rep purge.Report) {
	for _, p := range rep.Places {
		out.Files = append(out.Files, PurgePlace(p))
	}
	out.Places += len(rep.Places)
	out.Agents = rep.Agents()
	out.Left = rep.Left
}

// drawersHolding lists the index's drawers whose text, heading or
// superseded-by holds a text m finds.
func (a *App) drawersHolding(ctx context.Context, m *purge.Matcher) ([]store.Drawer, error) {
	ds, err := a.store.List(ctx, store.Filter{}, 0)
	if err != nil {
		return nil, err
	}
	var out []store.Drawer
	for _, d := range ds {
		if drawerHolds(d, m) {
			out = append(out, d)
		}
	}
	return out, nil
}

// purgeIndex takes the texts out of the index: every source with a drawer
// that holds one is mined again from its cleaned file (or dropped when
// the file is not in this home, or still holds it), then the store drops
// the cached vectors of those drawers and leaves no deleted byte in its
// files. It returns how many drawers held a text.
func (a *App) purgeIndex(ctx context.Context, st purge.Store, m *purge.Matcher, recorded []string, rep purge.Report, wait time.Duration) (int, error) {
	if err := a.index(ctx); err != nil {
		return 0, err
	}
	if a.store == nil {
		return 0, errors.New("no index")
	}
	release, err := a.LockFor(ctx, "purge", wait)
	if err != nil {
		return 0, err
	}
	defer release()
	ds, err := a.drawersHolding(ctx, m)
	if err != nil {
		return 0, err
	}
	hashes := append([]string(nil), recorded...)
	sources := map[string]bool{}
	for _, d := range ds {
		hashes = append(hashes, d.Hash)
		sources[d.Source] = true
	}
	if err := st.AddDrawers(hashes[len(recorded):]); err != nil {
		return 0, err
	}
	var errs []error
	for src := range sources {
		if err := a.remineOrDrop(ctx, src, m); err != nil {
			errs = append(errs, err)
		}
	}
	// A file renamed because its name held a text is mined under its new
	// name (its old one left the index above).
	for _, p := range rep.Places {
		if p.Renamed && (p.Kind == "memory" || p.Kind == "session" || p.Kind == "archive") {
			if _, err := a.mine(ctx, a.home.Abs(p.Path), palace.MineOptions{}); err != nil {
				a.log.Warn("purge: mining a renamed file failed; the next mine catches up", "source", p.Path, "err", err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return len(ds), err
	}
	return len(ds), a.store.Scrub(ctx, hashes)
}

// remineOrDrop mines a source again from its cleaned file; a source that
// is not a file of this home, or whose drawers still hold a text, leaves
// the index.
func (a *App) remineOrDrop(ctx context.Context, src string, m *purge.Matcher) error {
	path := a.home.Abs(src)
	inHome := !filepath.IsAbs(filepath.FromSlash(src))
	if st, err := os.Stat(path); inHome && err == nil && st.Mode().IsRegular() {
		if _, err := a.mine(ctx, path, palace.MineOptions{}); err != nil {
			a.log.Warn("purge: mining a cleaned file failed; its drawers leave the index", "source", src, "err", err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", src, err)
	}
	ds, err := a.store.Drawers(ctx, src)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: %w", src, err)
	}
	for _, d := range ds {
		if drawerHolds(d, m) {
			return a.store.DeleteFile(ctx, src)
		}
	}
	return nil
}

// drawerHolds reports whether a drawer's text, heading, superseded-by or
// source holds a text m finds.
func drawerHolds(d store.Drawer, m *purge.Matcher) bool {
	for _, s := range []string{d.Text, d.Heading, d.SupersededBy, d.Source} {
		if len(m.Find([]byte(s))) > 0 {
			return true
		}
	}
	return false
}

// finishPendingPurges finishes a purge an earlier process was killed in,
// if there is one: every command that opens the home calls it. A purge
// another process is finishing right now is left to it; a failure is
// logged and left for the next command.
func (a *App) finishPendingPurges(ctx context.Context) {
	if !purge.Pending(a.home.PalaceDir()) {
		return
	}
	st := purge.Open(a.home.PalaceDir())
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	unlock, err := st.Lock(lctx)
	cancel()
	if err != nil {
		return // another process is purging
	}
	defer func() { _ = unlock() }()
	if _, err := a.finishPurges(ctx, st, PurgeResult{}, 0); err != nil {
		a.log.Warn("an interrupted purge is not finished yet; the next command tries again", "err", err)
	}
}

// sectionPurgeTexts are what a purge of a section takes: the section as
// it stands, its heading (a heading line that is exactly it takes its
// section in every copy, however that copy differs), and its key-like
// words wherever they stand. Not its other lines one by one: an ordinary
// line ("- Added a test for every error path.") may stand in other
// sections and other agents' files, which the purge must not touch.
func sectionPurgeTexts(raw, heading, body string) []purge.Text {
	texts := []purge.Text{{Text: raw}}
	if h := strings.TrimSpace(heading); len(h) >= purge.MinLen {
		texts = append(texts, purge.Text{Text: h, Section: true})
	}
	for _, k := range keyLike(body) {
		texts = append(texts, purge.Text{Text: k})
	}
	return texts
}

// keyLike are the words of text that look like keys or tokens: 16 bytes
// or more without spaces, mixing upper case, lower case and digits. A
// section purged for a secret pasted in it takes them out of every file
// of the home, in whatever sentence another copy stands.
func keyLike(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, ".,;:!?()[]{}<>\"'`")
		if len(w) < 16 {
			continue
		}
		var upper, lower, digit bool
		for _, c := range w {
			switch {
			case c >= 'A' && c <= 'Z':
				upper = true
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= '0' && c <= '9':
				digit = true
			}
		}
		if upper && lower && digit {
			out = append(out, w)
		}
	}
	return out
}

// forgetPurge is Forget with Purge: it finds the section or line (or the
// drawer, wherever in the agent's files it stands), then purges its text
// from the whole home. Nothing is backed up: a backup would hold it.
func (a *App) forgetPurge(ctx context.Context, r ForgetRequest, agent string, out ForgetResult) (ForgetResult, error) {
	texts, err := a.forgetPurgeTexts(ctx, r, agent, &out)
	if err != nil {
		return out, fmt.Errorf("forget: %w", badInput(err))
	}
	// The answer names what went, never the text: a heading made from a
	// note's first words, or the line, may hold it.
	if m, err := purge.Ephemeral(texts); err == nil {
		bl := purge.NewBlocklist(m)
		if out.Section != nil {
			out.Section.Heading, _ = bl.Redact(out.Section.Heading)
		}
		if out.Line != nil {
			out.Line.Text, _ = bl.Redact(out.Line.Text)
			out.Line.Heading, _ = bl.Redact(out.Line.Heading)
		}
	}
	res, err := a.purgeTexts(ctx, texts, false, r.LockWait)
	out.Purge = &res
	for _, f := range res.Files {
		out.Purged = append(out.Purged, f.Path)
	}
	out.DrawersRemoved = res.Drawers
	if err != nil {
		out.MineError = err.Error()
		return out, fmt.Errorf("forget: %w", err)
	}
	return out, nil
}

// forgetPurgeTexts are the texts a forget --purge takes out of the home.
func (a *App) forgetPurgeTexts(ctx context.Context, r ForgetRequest, agent string, out *ForgetResult) ([]purge.Text, error) {
	ref := r.Heading
	if r.Drawer != "" {
		var err error
		if ref, err = a.sectionRef(ctx, agent, r.Drawer); err != nil {
			// A drawer of the agent's that already left the memory file
			// (archive, sessions) is purged as it stands in the index.
			if a.index(ctx) != nil || r.Line != "" {
				return nil, err
			}
			ds, gerr := a.store.Get(ctx, []string{r.Drawer})
			if gerr != nil || len(ds) == 0 || ds[0].Agent != agent {
				return nil, err
			}
			d := ds[0]
			out.Source = d.Source
			out.Section = &SectionInfo{Heading: d.Heading, Kind: d.Room, StartLine: d.LineStart, EndLine: d.LineEnd, Date: d.Date}
			texts := sectionPurgeTexts(d.Text, d.Heading, d.Text)
			if len(d.Text) < purge.MinLen {
				texts = texts[1:]
			}
			return texts, nil
		}
	}
	path, _ := a.home.MemoryPath(agent)
	data, err := a.home.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("agent %s has no memory file", agent)
	}
	if err != nil {
		return nil, err
	}
	if r.Line != "" {
		_, line, err := memfile.RemoveLine(data, ref, r.Line)
		if err != nil {
			return nil, err
		}
		li := lineInfoOf(line)
		out.Line = &li
		t := strings.TrimSpace(line.Text)
		if err := purge.CheckText(t); err != nil {
			return nil, invalid(fmt.Errorf("line %d: %w; forget it without --purge", line.Number, err))
		}
		texts := []purge.Text{{Text: line.Text}, {Text: t}}
		if n := strings.TrimSpace(r.Line); len(n) >= purge.MinLen {
			texts = append(texts, purge.Text{Text: n})
		}
		return texts, nil
	}
	_, removed, err := memfile.RemoveSection(data, ref)
	if err != nil && ref != "" && strings.Contains(err.Error(), "no section") {
		// A section that already left the file: in the agent's archive
		// or forgotten text.
		if s, src, ok := a.sectionElsewhere(agent, ref); ok {
			removed, err, out.Source = s, nil, src
		}
	}
	if err != nil {
		return nil, err
	}
	si := sectionOf(removed)
	out.Section = &si
	return sectionPurgeTexts(removed.Raw, removed.Heading, removed.Body()), nil
}

// sectionElsewhere finds the section ref names in the agent's archive or
// forgotten text, and the file it is in (relative to the home).
func (a *App) sectionElsewhere(agent, ref string) (memfile.Section, string, bool) {
	arch, _ := a.home.ArchiveDir(agent)
	forgotten, _ := a.home.ForgottenDir(agent)
	for _, dir := range []string{arch, forgotten} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			data, err := a.home.ReadFile(p)
			if err != nil {
				continue
			}
			f, err := memfile.Parse(data)
			if err != nil {
				continue
			}
			if i, err := f.FindSection(ref); err == nil {
				return f.Sections[i], a.home.Rel(p), true
			}
		}
	}
	return memfile.Section{}, "", false
}
