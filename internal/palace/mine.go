package palace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/store"
)

// MineOptions overrides the metadata the miner derives from paths.
type MineOptions struct {
	Wing     string // default: the agent id, else "default"
	Agent    string // default: derived from hive/agents/<id>/ or hive/archive/<id>/
	Room     string // default: derived from the section (pinned, condensed, recent, archive)
	Progress func(done, total int, path string)
	// ReportsSkips says the caller shows the report's Skipped itself (the
	// CLI's warnings): the palace does not log them too. Otherwise each
	// skip is a log warning, where `hivemem run` shows it.
	ReportsSkips bool
}

// Skip is a file the miner passed over, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// MineReport summarises one mine.
type MineReport struct {
	Files        int     `json:"files"`
	Unchanged    int     `json:"unchanged"`
	Changed      int     `json:"changed"`
	FilesRemoved int     `json:"files_removed"`
	Added        int     `json:"drawers_added"`
	Kept         int     `json:"drawers_kept"`
	Removed      int     `json:"drawers_removed"`
	Embedded     int     `json:"embedded"`
	CacheHits    int     `json:"embed_cache_hits"`
	Skipped      []Skip  `json:"skipped"`
	Seconds      float64 `json:"seconds"`
}

// Add adds the counts of o (a mine of other files) to r; Seconds is the
// caller's to set.
func (r *MineReport) Add(o MineReport) {
	r.Files += o.Files
	r.Unchanged += o.Unchanged
	r.Changed += o.Changed
	r.FilesRemoved += o.FilesRemoved
	r.Added += o.Added
	r.Kept += o.Kept
	r.Removed += o.Removed
	r.Embedded += o.Embedded
	r.CacheHits += o.CacheHits
	r.Skipped = append(r.Skipped, o.Skipped...)
}

// Mine brings the index in step with the memory files under path (a
// directory or one file). Unchanged files cost one hash; changed files embed
// only their new drawers; files that vanished lose their drawers. Files that
// cannot be mined (binary, invalid UTF-8 in the text or the path, too
// large, unreadable, not a regular file) are skipped with a reason, keep
// the drawers they had (see keepSkipped), and never stop the run; each is
// logged unless opts.ReportsSkips. A path that is gone and was never
// mined is nothing to do.
func (p *Palace) Mine(ctx context.Context, path string, opts MineOptions) (MineReport, error) {
	rep, err := p.mine(ctx, path, opts)
	if !opts.ReportsSkips {
		for _, s := range rep.Skipped {
			p.log.Warn("mine: skipping file", "path", s.Path, "reason", s.Reason)
		}
	}
	return rep, err
}

func (p *Palace) mine(ctx context.Context, path string, opts MineOptions) (MineReport, error) {
	start := time.Now()
	var rep MineReport
	if path == "" {
		return rep, errors.New("mine: the path is empty: name a directory or a file")
	}
	if err := p.validateMineOptions(opts); err != nil {
		return rep, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return rep, fmt.Errorf("mine %s: %w", path, err)
	}
	given := abs
	abs, reason := p.canonical(abs)
	if reason != "" {
		// A link out of the home: not followed, and what it led to
		// before is no longer the home's.
		return p.mineSkipped(ctx, abs, reason)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A vanished file (or directory) loses its drawers; one never
		// mined (say, deleted just after it was written) is nothing to do.
		n, derr := p.removeMissing(ctx, p.home.Rel(abs), nil, nil)
		if derr != nil {
			return rep, derr
		}
		rep.FilesRemoved = n
		rep.Seconds = time.Since(start).Seconds()
		return rep, nil
	case err != nil:
		return rep, fmt.Errorf("mine %s: %w", path, err)
	}

	var files []mineTarget
	var ignored map[string]bool
	if st.IsDir() {
		files, ignored, rep.Skipped, err = p.collect(ctx, abs)
		if err != nil {
			return rep, err
		}
	} else {
		files = []mineTarget{{path: abs, given: given}}
	}
	progress(ctx, func(pr *Progress) { pr.Files += len(files) })
	seen := make(map[string]bool, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		seen[p.home.Rel(f.path)] = true
		r, err := p.mineFile(ctx, f, opts)
		if err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			return rep, err
		}
		rep.Add(r)
		progress(ctx, func(pr *Progress) { pr.FilesDone++ })
		if opts.Progress != nil {
			opts.Progress(i+1, len(files), f.path)
		}
	}
	if st.IsDir() {
		n, err := p.removeMissing(ctx, p.home.Rel(abs), seen, ignored)
		if err != nil {
			return rep, err
		}
		rep.FilesRemoved += n
	}
	if p.emb != nil {
		n, err := p.fillMissingVectors(ctx)
		rep.Embedded += n
		if err != nil {
			return rep, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// validateMineOptions refuses metadata that could not be searched for or
// that names no agent: the agent is held to the agent id rule, as
// everywhere else.
func (p *Palace) validateMineOptions(o MineOptions) error {
	for _, v := range []struct{ name, val string }{{"wing", o.Wing}, {"agent", o.Agent}, {"room", o.Room}} {
		if v.val == "" {
			continue
		}
		if len(v.val) > 128 || !utf8.ValidString(v.val) || strings.ContainsAny(v.val, "\x00\n\r") {
			return fmt.Errorf("mine: invalid --%s %q", v.name, v.val)
		}
	}
	if o.Agent != "" {
		if err := home.ValidateAgentID(o.Agent); err != nil {
			return fmt.Errorf("mine: --agent: %w", err)
		}
	}
	return nil
}

// mineTarget is a file to mine: its path with symlinks resolved (the one
// the index knows it by) and the path it was found at, whose agent
// directory names its agent when the resolved one does not (memory.md a
// link to another file of the agent's directory).
type mineTarget struct{ path, given string }

// canonical applies the home's symlink rule (home.Contain) to a path to
// mine: a path of the home comes back with its symlinks resolved; one
// that links lead out of the home comes back as is with the reason it is
// not followed. A path outside the home that is no symlink (mine any
// folder) is mined where it is.
func (p *Palace) canonical(path string) (string, string) {
	c, err := p.home.Contain(path)
	switch {
	case err == nil:
		return c, ""
	case errors.Is(err, home.ErrOutsideHome):
		if fi, lerr := os.Lstat(path); p.home.Inside(path) || lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return path, "symlink not followed: " + err.Error()
		}
		return path, ""
	default:
		return path, "unreadable: " + err.Error()
	}
}

// readFile reads a file to mine or show under the same rules: symlinks
// only inside the home (canonical), never a FIFO or device
// (atomicio.ReadRegular).
func (p *Palace) readFile(path string) ([]byte, error) {
	c, reason := p.canonical(path)
	if reason != "" {
		return nil, fmt.Errorf("%s: %s", path, reason)
	}
	return atomicio.ReadRegular(c)
}

// mineSkipped skips a path not mined at all (a link out of the home),
// dropping the drawers it had.
func (p *Palace) mineSkipped(ctx context.Context, path, reason string) (MineReport, error) {
	source := p.home.Rel(path)
	if !plainText(source) {
		return p.skip(path, reason), nil
	}
	unlock, err := p.store.LockSource(ctx, source)
	if err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	defer unlock()
	return p.dropSkipped(ctx, path, source, reason)
}

// collect walks a directory for markdown files. Backups, forgotten text
// (hive/forgotten), the palace and hidden files (including the atomic writer's temp files) are never mined,
// nor what the tree's .gitignore files exclude; the markdown files and
// directories they exclude are returned as ignored (see ignoredSource), to
// lose any drawers they had. Symlinks are followed under the home's rule
// (see canonical): a link inside the home is mined as its target, once
// however many links lead to it, and a directory reached again through a
// link is not walked twice; a link out of the home is skipped with the
// reason.
func (p *Palace) collect(ctx context.Context, dir string) ([]mineTarget, map[string]bool, []Skip, error) {
	c := collector{p: p, ctx: ctx, files: map[string]bool{}, dirs: map[string]bool{}, ignored: map[string]bool{}}
	if err := c.walk(dir, dir); err != nil {
		return nil, nil, nil, fmt.Errorf("mine %s: %w", dir, err)
	}
	return c.out, c.ignored, c.skipped, nil
}

type collector struct {
	p       *Palace
	ctx     context.Context
	out     []mineTarget
	skipped []Skip
	ignored map[string]bool // sources (and directories, ending in "/") a .gitignore excludes
	files   map[string]bool // resolved files collected
	dirs    map[string]bool // resolved directories walked
}

// walk walks dir, found at the path given (a symlink's when dir is its
// target), under the .gitignore files from dir down.
func (c *collector) walk(dir, given string) error {
	backups, palaceDir, forgotten := c.p.home.BackupsDir(), c.p.home.PalaceDir(), c.p.home.ForgottenRoot()
	rules := newIgnoreRules(dir)
	givenPath := func(path string) string {
		if rel, err := filepath.Rel(dir, path); err == nil {
			return filepath.Join(given, rel)
		}
		return path
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			c.skipped = append(c.skipped, Skip{Path: path, Reason: "unreadable: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || name == "node_modules") || path == backups || path == palaceDir || path == forgotten || c.dirs[path] {
				return fs.SkipDir
			}
			if rules.ignored(path, true) {
				c.ignored[c.p.home.Rel(path)+"/"] = true
				return fs.SkipDir
			}
			if why := rules.enter(path); why != "" {
				c.skipped = append(c.skipped, Skip{Path: filepath.Join(path, ".gitignore"), Reason: why})
			}
			c.dirs[path] = true
			return nil
		}
		if strings.HasPrefix(name, ".") {
			return nil
		}
		md := strings.HasSuffix(strings.ToLower(name), ".md")
		if (md || d.Type()&fs.ModeSymlink != 0) && rules.ignored(path, false) {
			if md {
				c.ignored[c.p.home.Rel(path)] = true
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return c.link(path, givenPath(path), md)
		}
		// A .md that is not a regular file (a FIFO, a device) goes to
		// mineFile too, which skips it with its reason and keeps the
		// drawers it had, as when that one file is mined.
		if !md {
			return nil
		}
		c.add(path, givenPath(path))
		return nil
	})
}

// link follows a symlink met in the walk, under the home's rule.
func (c *collector) link(path, given string, md bool) error {
	target, reason := c.p.canonical(path)
	st, err := os.Stat(target)
	switch {
	case reason != "":
		c.skipped = append(c.skipped, Skip{Path: path, Reason: reason})
	case errors.Is(err, fs.ErrNotExist):
		// A dangling link inside the home: nothing to mine yet.
	case err != nil:
		c.skipped = append(c.skipped, Skip{Path: path, Reason: "unreadable: " + err.Error()})
	case st.IsDir():
		if !c.dirs[target] && target != c.p.home.BackupsDir() && target != c.p.home.PalaceDir() && target != c.p.home.ForgottenRoot() {
			return c.walk(target, given)
		}
	case md:
		c.add(target, given)
	}
	return nil
}

func (c *collector) add(path, given string) {
	if !c.files[path] {
		c.files[path] = true
		c.out = append(c.out, mineTarget{path: path, given: given})
	}
}

// removeMissing deletes index entries for files at or under root (a source
// as home.Rel gives it; "." is the home itself) that were not seen
// (seen == nil: root names one vanished file or directory): those that are
// gone, and those a .gitignore now excludes (ignored).
func (p *Palace) removeMissing(ctx context.Context, root string, seen, ignored map[string]bool) (int, error) {
	prefix := root
	if root == "." {
		prefix = "" // every source inside the home is relative
	}
	files, err := p.store.Files(ctx, prefix)
	if err != nil {
		return 0, fmt.Errorf("mine: %w", err)
	}
	n := 0
	for _, f := range files {
		inside := f.Source == root || strings.HasPrefix(f.Source, root+"/")
		if root == "." {
			inside = !filepath.IsAbs(filepath.FromSlash(f.Source))
		}
		if !inside || seen[f.Source] {
			continue
		}
		removed, err := p.removeVanished(ctx, f.Source, ignoredSource(ignored, f.Source))
		if err != nil {
			return n, err
		}
		if removed {
			n++
		}
	}
	return n, nil
}

// ignoredSource reports whether source is in ignored: the file itself, or
// a directory above it (a key ending in "/").
func ignoredSource(ignored map[string]bool, source string) bool {
	if len(ignored) == 0 {
		return false
	}
	if ignored[source] {
		return true
	}
	for d := path.Dir(source); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if ignored[d+"/"] {
			return true
		}
	}
	return false
}

// removeVanished deletes a source's index entries if its file is gone (or,
// when ignored, whether or not it is), under the source lock where the
// backend has one.
func (p *Palace) removeVanished(ctx context.Context, source string, ignored bool) (bool, error) {
	unlock, err := p.store.LockSource(ctx, source)
	if err != nil {
		return false, fmt.Errorf("mine: remove %s: %w", source, err)
	}
	defer unlock()
	return p.removeVanishedLocked(ctx, source, ignored)
}

// removeVanishedLocked is removeVanished for a caller holding the source
// lock.
func (p *Palace) removeVanishedLocked(ctx context.Context, source string, ignored bool) (bool, error) {
	// A file reached only through a link out of the home is as good as
	// gone: it is not the home's.
	if abs, reason := p.canonical(p.home.Abs(source)); reason == "" {
		if _, err := os.Stat(abs); err == nil && !ignored {
			return false, nil // exists but was not collected (e.g. hidden): leave it alone
		}
	}
	// Read under the lock: another home may have just mined it.
	f, err := p.store.GetFile(ctx, source)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mine: remove %s: %w", source, err)
	}
	if !p.owns(f) {
		return false, nil // another machine's file in a shared palace
	}
	if err := p.store.DeleteFile(ctx, source); err != nil {
		return false, fmt.Errorf("mine: remove %s: %w", source, err)
	}
	return true, nil
}

// owns reports whether this home may remove a file's index entries: one it
// mined, or one no home claimed (mined before files had an origin). Only a
// palace shared by several homes (store.Writer.Shared) holds other
// homes' files; a palace of this home alone owns all of them, even those
// mined before its home id was made again.
func (p *Palace) owns(f store.File) bool {
	if !p.store.Shared() {
		return true
	}
	return f.Origin == "" || f.Origin == p.opts.Origin
}

// keepSkipped skips a file that cannot be mined as it is now (too large,
// binary, invalid UTF-8, unreadable, not a regular file) and leaves the
// drawers it had alone: they hold the last text mined from it, and
// dropping them would make that history vanish from search (an archive
// grown past palace.max_file_bytes, a memory file with one bad byte). They
// follow the file again at its next successful mine, and go when it
// vanishes. A fresh index (reindex) has none of them, as it cannot mine
// the file either.
func (p *Palace) keepSkipped(path, reason string) (MineReport, error) {
	rep := p.skip(path, reason)
	return rep, nil
}

// dropSkipped skips a path that is not mined at all (a link out of the
// home) and removes the drawers it had. The caller holds the source lock.
func (p *Palace) dropSkipped(ctx context.Context, path, source, reason string) (MineReport, error) {
	rep := p.skip(path, reason)
	f, err := p.store.GetFile(ctx, source)
	if errors.Is(err, store.ErrNotFound) || err == nil && !p.owns(f) {
		return rep, nil
	}
	if err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	if err := p.store.DeleteFile(ctx, source); err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	rep.FilesRemoved = 1
	return rep, nil
}

// vanished removes the drawers of a file gone since it was listed. The
// caller holds the source lock.
func (p *Palace) vanished(ctx context.Context, source string) (MineReport, error) {
	removed, err := p.removeVanishedLocked(ctx, source, false)
	if err != nil || !removed {
		return MineReport{}, err
	}
	return MineReport{FilesRemoved: 1}, nil
}

// unreadable is the outcome of a file whose Stat or read failed with err:
// vanished when it is gone, else kept as it was. The caller holds the
// source lock.
func (p *Palace) unreadable(ctx context.Context, source, path string, err error) (MineReport, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return p.vanished(ctx, source)
	}
	return p.keepSkipped(path, "unreadable: "+err.Error())
}

// tooLarge is the reason a file of size bytes is not mined.
func (p *Palace) tooLarge(size int64) string {
	return fmt.Sprintf("too large: %d bytes, the limit is %d (palace.max_file_bytes)", size, p.opts.MaxFileBytes)
}

// skip is the report of a file skipped (Mine logs it).
func (p *Palace) skip(path, reason string) MineReport {
	return MineReport{Skipped: []Skip{{Path: path, Reason: reason}}}
}

// mineFile brings one file's drawers in step.
func (p *Palace) mineFile(ctx context.Context, t mineTarget, opts MineOptions) (MineReport, error) {
	path := t.path
	source := p.home.Rel(path)
	if !plainText(source) {
		// Say, a name from an old Latin-1 system. Skipped on every backend
		// alike: PostgreSQL could not even look the path up.
		return p.skip(path, "path is not valid UTF-8: the index keeps paths as text (rename the file)"), nil
	}
	unlock, err := p.store.LockSource(ctx, source)
	if err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	defer unlock()
	// From here a file that cannot be mined keeps the drawers it had, and
	// one gone since it was listed is a vanished file, not an unreadable one.
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return p.unreadable(ctx, source, path, err)
	case !st.Mode().IsRegular():
		return p.keepSkipped(path, "not a regular file ("+st.Mode().Type().String()+")")
	case st.Size() > p.opts.MaxFileBytes:
		return p.keepSkipped(path, p.tooLarge(st.Size()))
	}
	// ReadRegular, not os.ReadFile: a FIFO swapped in since the Stat is
	// refused, not waited on.
	data, err := atomicio.ReadRegular(path)
	switch {
	case err != nil:
		return p.unreadable(ctx, source, path, err)
	case int64(len(data)) > p.opts.MaxFileBytes:
		return p.keepSkipped(path, p.tooLarge(int64(len(data))))
	}
	sum := sha256.Sum256(data)
	fileHash := hex.EncodeToString(sum[:])

	wing, agent, roomOverride := p.metadata(t, opts)
	old, err := p.store.GetFile(ctx, source)
	if err == nil && old.Hash == fileHash && old.Wing == wing && old.Agent == agent && old.Room == opts.Room {
		return MineReport{Files: 1, Unchanged: 1}, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return p.keepSkipped(path, "binary file (contains NUL bytes)")
	}
	if !utf8.Valid(data) {
		return p.keepSkipped(path, "not valid UTF-8")
	}
	if p.opts.Gate != nil {
		out, rewritten, err := p.opts.Gate(ctx, path, data)
		if err != nil {
			return p.keepSkipped(path, "not indexed until its secrets are redacted: "+err.Error())
		}
		if rewritten {
			sum := sha256.Sum256(out)
			fileHash = hex.EncodeToString(sum[:])
		}
		data = out
	}
	mf, err := memfile.Parse(data)
	if err != nil {
		return p.keepSkipped(path, "unparseable: "+err.Error())
	}
	chunks := chunk.File(mf, p.opts.MaxTokens)
	want := p.drawers(source, wing, agent, roomOverride, chunks)

	existing, err := p.store.Drawers(ctx, source)
	if err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	have := make(map[string]store.Drawer, len(existing))
	for _, d := range existing {
		have[d.ID] = d
	}
	rep := MineReport{Files: 1, Changed: 1}
	u := store.FileUpdate{File: store.File{Source: source, Hash: fileHash, Size: int64(len(data)), MinedAt: time.Now().UTC(), Wing: wing, Agent: agent, Origin: p.opts.Origin, Room: opts.Room}}
	for _, d := range want {
		h, ok := have[d.ID]
		if !ok {
			u.Insert = append(u.Insert, d)
			continue
		}
		delete(have, d.ID)
		if h.Text != d.Text {
			// The same embed text from other lines (say, a line made a
			// heading): an update moves metadata only, so replace it.
			u.Delete = append(u.Delete, d.ID)
			u.Insert = append(u.Insert, d)
			continue
		}
		rep.Kept++
		if h.Wing != d.Wing || h.Room != d.Room || h.Agent != d.Agent || h.LineStart != d.LineStart ||
			h.LineEnd != d.LineEnd || h.Date != d.Date || h.Heading != d.Heading || h.SupersededBy != d.SupersededBy {
			u.Update = append(u.Update, d)
		}
	}
	for id := range have {
		u.Delete = append(u.Delete, id)
	}
	rep.Added, rep.Removed = len(u.Insert), len(u.Delete)
	if p.emb != nil && len(u.Insert) > 0 {
		embedded, hits, err := p.embedDrawers(ctx, u.Insert)
		if err != nil {
			return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
		}
		rep.Embedded, rep.CacheHits = embedded, hits
	}
	if err := p.store.Apply(ctx, u); err != nil {
		return MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	return rep, nil
}

// metadata derives wing, agent and a room override for a file.
// The resolved path names the agent, else the path the file was found at.
func (p *Palace) metadata(t mineTarget, opts MineOptions) (wing, agent, room string) {
	id, archive, ok := p.home.AgentFromPath(t.path)
	if !ok {
		id, archive, ok = p.home.AgentFromPath(t.given)
	}
	sessionOf, session := p.home.SessionFromPath(t.path)
	if !session {
		sessionOf, session = p.home.SessionFromPath(t.given)
	}
	if session {
		id, ok = sessionOf, true
	}
	agent = opts.Agent
	if agent == "" && ok {
		agent = id
	}
	wing = opts.Wing
	if wing == "" {
		wing = agent
	}
	if wing == "" {
		wing = "default"
	}
	room = opts.Room
	switch {
	case room != "":
	case archive:
		room = chunk.RoomArchive
	case session:
		room = chunk.RoomSession
	}
	return wing, agent, room
}

// drawers turns chunks into drawers keyed by content: the same text in the
// same file keeps its id however the lines around it move.
func (p *Palace) drawers(source, wing, agent, room string, chunks []chunk.Chunk) []store.Drawer {
	seen := map[string]int{}
	out := make([]store.Drawer, 0, len(chunks))
	for _, c := range chunks {
		text := c.EmbedText()
		th := sha256.Sum256([]byte(text))
		hash := hex.EncodeToString(th[:])
		ih := sha256.Sum256([]byte(source + "\x00" + hash))
		id := hex.EncodeToString(ih[:10])
		seen[id]++
		if n := seen[id]; n > 1 {
			id = fmt.Sprintf("%s-%d", id, n)
		}
		r := c.Room
		if room != "" {
			r = room
		}
		out = append(out, store.Drawer{
			ID: id, Wing: wing, Room: r, Agent: agent, Source: source, Heading: c.Heading,
			LineStart: c.LineStart, LineEnd: c.LineEnd, Date: c.Date, Hash: hash, Text: c.Text,
			SupersededBy: c.SupersededBy,
		})
	}
	resolveSupersededBy(out)
	return out
}

// resolveSupersededBy turns the heading a superseded drawer names into the
// id of the first drawer of that section in the same file; a heading with
// no drawer here (the section condensed away, or in another file) stays
// as it is.
func resolveSupersededBy(ds []store.Drawer) {
	first := map[string]string{}
	for _, d := range ds {
		if _, ok := first[d.Heading]; !ok && d.Heading != "" {
			first[d.Heading] = d.ID
		}
	}
	for i, d := range ds {
		if d.SupersededBy == "" {
			continue
		}
		if id, ok := first[d.SupersededBy]; ok && id != d.ID {
			ds[i].SupersededBy = id
		}
	}
}

// embedDrawers fills the Vector of each drawer, from the cache when the
// same text was embedded before by the same model.
func (p *Palace) embedDrawers(ctx context.Context, ds []store.Drawer) (embedded, hits int, err error) {
	model := p.emb.ModelID()
	hashes := make([]string, len(ds))
	for i, d := range ds {
		hashes[i] = d.Hash
	}
	cached, err := p.store.CachedEmbeddings(ctx, model, hashes)
	if err != nil {
		return 0, 0, err
	}
	var todo []int
	for i := range ds {
		if v, ok := cached[ds[i].Hash]; ok {
			ds[i].Vector = v
			hits++
		} else {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo); start += p.opts.EmbedBatch {
		end := min(start+p.opts.EmbedBatch, len(todo))
		texts := make([]string, 0, end-start)
		for _, i := range todo[start:end] {
			texts = append(texts, embedText(ds[i]))
		}
		vecs, err := p.embed(ctx, true, texts)
		if err != nil {
			return embedded, hits, fmt.Errorf("embed: %w", err)
		}
		if len(vecs) != len(texts) {
			return embedded, hits, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
		}
		hs := make([]string, 0, len(vecs))
		for k, i := range todo[start:end] {
			ds[i].Vector = vecs[k]
			hs = append(hs, ds[i].Hash)
		}
		if err := p.store.PutEmbeddings(ctx, model, hs, vecs); err != nil {
			return embedded, hits, err
		}
		embedded += len(vecs)
		progress(ctx, func(pr *Progress) { pr.Embedded += len(vecs) })
	}
	return embedded, hits, nil
}

func embedText(d store.Drawer) string {
	return chunk.Chunk{Heading: d.Heading, Text: d.Text}.EmbedText()
}

// fillMissingVectors embeds drawers that were stored without a vector, as
// after a model change or a mine without a model.
func (p *Palace) fillMissingVectors(ctx context.Context) (int, error) {
	total := 0
	for {
		ds, err := p.store.MissingVectors(ctx, 256)
		if err != nil || len(ds) == 0 {
			return total, err
		}
		n, _, err := p.embedDrawers(ctx, ds)
		total += n
		if err != nil {
			return total, err
		}
		ids := make([]string, len(ds))
		vecs := make([][]float32, len(ds))
		for i, d := range ds {
			ids[i], vecs[i] = d.ID, d.Vector
		}
		if err := p.setVectors(ctx, ids, vecs); err != nil {
			return total, err
		}
	}
}

// setVectors stores vectors for drawers; drawers that another process
// deleted since they were listed (a shared palace) are left out.
func (p *Palace) setVectors(ctx context.Context, ids []string, vecs [][]float32) error {
	err := p.store.SetVectors(ctx, ids, vecs)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	live, gerr := p.store.Get(ctx, ids)
	if gerr != nil {
		return errors.Join(err, gerr)
	}
	exists := make(map[string]bool, len(live))
	for _, d := range live {
		exists[d.ID] = true
	}
	var keepIDs []string
	var keepVecs [][]float32
	for i, id := range ids {
		if exists[id] {
			keepIDs, keepVecs = append(keepIDs, id), append(keepVecs, vecs[i])
		}
	}
	return p.store.SetVectors(ctx, keepIDs, keepVecs)
}
