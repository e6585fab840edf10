package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
)

// DefaultMaxSessionBytes is capture.session_max_bytes's default.
const DefaultMaxSessionBytes = 1 << 20

// MaxSourceBytes bounds one source file read by Import.
const MaxSourceBytes = 512 << 20

// lockTimeout bounds the wait for another import of the same conversation.
const lockTimeout = 30 * time.Second

// Options says what Import does.
type Options struct {
	Agent string
	// Format is a name from Formats; "" or "auto" detects it per file.
	Format string
	// MaxSessionBytes caps a session file: turns that would take it past
	// the cap go to a new part (<stem>-2.md, -3, …). 0: the default.
	MaxSessionBytes int64
	// RetentionDays removes the agent's session files not written for
	// that many days, after the import, and leaves out conversations whose
	// last turn is older than that (so that a source kept longer does not
	// bring them back); 0 keeps everything.
	RetentionDays int
	// Now dates turns whose source has no time (default time.Now).
	Now time.Time
	// Events, when set, gets an "import" event per import that wrote
	// something and a "session-expire" event per file retention removed.
	Events *eventlog.Log
	// Redact, when set, rewrites the text of every turn to be written,
	// and the title of a conversation whose file is created, before it is
	// written (the app's redaction of secrets).
	Redact func(string) (string, error)
}

// SessionResult is what Import did with one conversation.
type SessionResult struct {
	Source       string `json:"source"`
	Format       string `json:"format"`
	Conversation string `json:"conversation"`
	Path         string `json:"path"`
	TurnsAdded   int    `json:"turns_added"`
	TurnsKept    int    `json:"turns_already_there"`
	Created      bool   `json:"created"`
	parts        []string
}

// Files are every session file of the conversation (its parts, first to
// last), whether or not this import wrote to them.
func (s SessionResult) Files() []string { return slices.Clone(s.parts) }

// Result reports an import. A nil error from Import means every session
// file holds its conversation, whatever MineErr says.
type Result struct {
	Sessions   []SessionResult `json:"sessions"`
	TurnsAdded int             `json:"turns_added"`
	Expired    []string        `json:"expired,omitempty"`
	// Skipped are files under a directory given that could not be read.
	Skipped []palace.Skip     `json:"skipped,omitempty"`
	Mine    palace.MineReport `json:"mine"`
	// MineErr is why the index is behind the files (reported as a
	// warning: the next mine catches up).
	MineErr error `json:"-"`
	// Redacted counts the secrets replaced by markers before the write,
	// by kind; SecretsKept those found and kept as asked (the app sets
	// both).
	Redacted    map[string]int `json:"redacted,omitempty"`
	SecretsKept map[string]int `json:"secrets_kept,omitempty"`
	// Purged counts the texts purged from this home that were left out
	// of what was read (the app sets it): the source files outside the
	// home still hold them.
	Purged int `json:"purged,omitempty"`
}

// source is a parsed input file.
type source struct {
	path  string
	mtime time.Time
	convs []Conversation
}

// Import turns the conversations in paths (files, or directories whose
// conversation files are taken, see Collect) into the agent's session files
// (hive/agents/<agent>/sessions/), appending only turns not imported
// before, then mines them (room "session"). Every path is read and parsed
// before anything is written, so malformed input (an error naming file
// and line) changes nothing. Each session file is written under its lock
// and swapped in atomically.
func Import(ctx context.Context, h home.Home, m palace.Miner, paths []string, o Options) (Result, error) {
	var res Result
	dir, err := h.SessionsDir(o.Agent)
	if err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	if len(paths) == 0 {
		return res, errors.New("import: no file to import")
	}
	if o.Format != "" && o.Format != "auto" {
		if _, ok := parsers[o.Format]; !ok {
			return res, fmt.Errorf("import: unknown format %q (want one of %s, or auto)", o.Format, strings.Join(Formats(), ", "))
		}
	}
	if o.MaxSessionBytes <= 0 {
		o.MaxSessionBytes = DefaultMaxSessionBytes
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	files, skipped, err := expand(ctx, paths, o.Format)
	if err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	res.Skipped = skipped
	var srcs []source
	for _, p := range files {
		s, err := readSource(p, o.Format)
		if err != nil {
			return res, fmt.Errorf("import: %w", err)
		}
		srcs = append(srcs, s)
	}
	// Never write sessions through a link out of the home.
	if err := h.MkdirAll(dir); err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	var cutoff time.Time
	if o.RetentionDays > 0 {
		cutoff = o.Now.Add(-time.Duration(o.RetentionDays) * 24 * time.Hour)
	}
	written := map[string]bool{}
	for _, s := range srcs {
		for _, c := range s.convs {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if last := c.Last(s.mtime); !cutoff.IsZero() && last.Before(cutoff) {
				// Past retention: importing it would only bring back what
				// retention removed.
				res.Skipped = append(res.Skipped, palace.Skip{Path: s.path, Reason: fmt.Sprintf(
					"conversation %s: its last turn (%s) is older than capture.retention_days (%d)", c.ID, last.Format("2006-01-02"), o.RetentionDays)})
				continue
			}
			sr, err := writeConversation(ctx, dir, o, c, s.mtime)
			if err != nil {
				return res, fmt.Errorf("import %s: %w", s.path, err)
			}
			sr.Source = s.path
			for _, p := range sr.parts {
				written[p] = true // no part of a live conversation expires
			}
			res.Sessions = append(res.Sessions, sr)
			res.TurnsAdded += sr.TurnsAdded
		}
	}
	if !cutoff.IsZero() {
		res.Expired, err = expire(dir, cutoff, written)
		if err != nil {
			return res, fmt.Errorf("import: retention: %w", err)
		}
	}
	created, err := ensureMemory(ctx, h, o.Agent)
	if err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	res.Mine, res.MineErr = m.Mine(ctx, dir, palace.MineOptions{})
	if created && res.MineErr == nil {
		mem, _ := h.MemoryPath(o.Agent)
		var r palace.MineReport
		r, res.MineErr = m.Mine(ctx, mem, palace.MineOptions{})
		res.Mine.Files += r.Files
		res.Mine.Changed += r.Changed
		res.Mine.Added += r.Added
	}
	if o.Events != nil {
		for _, p := range res.Expired {
			_ = o.Events.Append(eventlog.Event{Kind: "session-expire", Agent: o.Agent, Reason: fmt.Sprintf("not written for %d days (capture.retention_days)", o.RetentionDays), Data: map[string]any{"path": h.Rel(p)}})
		}
		for _, s := range res.Sessions {
			if s.TurnsAdded > 0 {
				_ = o.Events.Append(eventlog.Event{Kind: "import", Agent: o.Agent, Data: map[string]any{
					"path": h.Rel(s.Path), "source": s.Source, "format": s.Format, "turns_added": s.TurnsAdded}})
			}
		}
	}
	return res, nil
}

// expand replaces a directory among paths by the conversation files under
// it (see Collect) in the format asked for (any, for auto).
func expand(ctx context.Context, paths []string, format string) ([]string, []palace.Skip, error) {
	var out []string
	var skipped []palace.Skip
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p) // readSource names the problem
			continue
		}
		found, sk, err := Collect(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, sk...)
		n := 0
		for _, f := range found {
			if format == "" || format == "auto" || f.Format == format || format == "text" && f.Format == "markdown" {
				out = append(out, f.Path)
				n++
			}
		}
		if n == 0 {
			what := "conversation"
			if format != "" && format != "auto" {
				what = format
			}
			return nil, nil, fmt.Errorf("%s: no %s files found in the directory", p, what)
		}
	}
	return out, skipped, nil
}

func readSource(path, format string) (source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return source{}, err
	}
	if !st.Mode().IsRegular() {
		return source{}, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > MaxSourceBytes {
		return source{}, fmt.Errorf("%s: %d bytes, at most %d read", path, st.Size(), MaxSourceBytes)
	}
	data, err := atomicio.ReadRegular(path)
	if err != nil {
		return source{}, err
	}
	if format == "" || format == "auto" {
		if format = Detect(path, data); format == "" {
			return source{}, fmt.Errorf("%s: not a conversation format hivemem recognises (name one: %s)", path, strings.Join(Formats(), ", "))
		}
	}
	convs, err := Parse(format, path, data)
	if err != nil {
		return source{}, err
	}
	return source{path: path, mtime: st.ModTime(), convs: convs}, nil
}

// part is one file of a conversation's session.
type part struct {
	n    int // 1 for the first file
	path string
}

// parts lists a conversation's session files in order.
func parts(dir, hash string) ([]part, error) {
	ents, err := home.MarkdownFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []part
	for _, e := range ents {
		name := e.Name()
		stem := strings.TrimSuffix(name, ".md")
		n := 1
		if i := strings.LastIndexByte(stem, '-'); i >= 0 {
			if k, err := strconv.Atoi(stem[i+1:]); err == nil && k >= 2 && strings.HasSuffix(stem[:i], "-"+hash) {
				n, stem = k, stem[:i]
			}
		}
		if strings.HasSuffix(stem, "-"+hash) {
			out = append(out, part{n: n, path: filepath.Join(dir, name)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out, nil
}

// writeConversation appends a conversation's new turns to its session file
// (its last part), holding the conversation's lock so that two imports of
// it at once (a hook at compaction and one at session end) do not both
// append the same turns.
func writeConversation(ctx context.Context, dir string, o Options, c Conversation, mtime time.Time) (SessionResult, error) {
	sr := SessionResult{Format: c.Format, Conversation: c.ID}
	hash := convHash(c.Format, c.ID)
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	unlock, err := atomicio.Lock(lctx, filepath.Join(dir, "."+hash))
	if err != nil {
		return sr, err
	}
	defer unlock()

	ps, err := parts(dir, hash)
	if err != nil {
		return sr, err
	}
	seen := map[string]bool{}
	for _, p := range ps {
		data, err := atomicio.ReadRegular(p.path)
		if err != nil {
			return sr, err
		}
		if err := keysIn(data, seen); err != nil {
			return sr, fmt.Errorf("%s: %w", p.path, err)
		}
	}
	if len(ps) == 0 && o.Redact != nil {
		// A new file: its name and header come from the title, else the
		// first user turn.
		if c.Title, err = o.Redact(c.Title); err != nil {
			return sr, err
		}
	}
	var fresh []Turn
	for _, t := range c.Turns {
		k := turnKey(t.Key)
		if seen[k] {
			sr.TurnsKept++
			continue
		}
		seen[k] = true // a key twice in the source is one turn
		// Only what is written is redacted (and counted): a turn imported
		// before was redacted then.
		if o.Redact != nil {
			if t.Text, err = o.Redact(t.Text); err != nil {
				return sr, err
			}
		}
		fresh = append(fresh, t)
	}
	if len(ps) == 0 && o.Redact != nil && strings.TrimSpace(c.Title) == "" {
		c.Turns = fresh // the file's name comes from its first user turn
	}
	fallback := mtime
	if fallback.IsZero() {
		fallback = o.Now
	}
	stem := fileStem(c, fallback)
	var cur part
	if len(ps) > 0 {
		cur = ps[len(ps)-1]
		stem = strings.TrimSuffix(filepath.Base(ps[0].path), ".md")
	} else {
		cur = part{n: 1, path: filepath.Join(dir, stem+".md")}
		sr.Created = true
	}
	sr.Path = cur.path
	for _, p := range ps {
		sr.parts = append(sr.parts, p.path)
	}
	if len(fresh) == 0 {
		return sr, nil
	}
	secs := sections(fresh, fallback)
	for len(secs) > 0 {
		// Fill the current part up to the cap (at least one section, so
		// that an over-large exchange still lands somewhere), then go on
		// in the next.
		var took int
		err := atomicio.Update(lctx, cur.path, 0o644, func(old []byte) ([]byte, error) {
			took = 0
			if old == nil {
				old = []byte(header(c, o.Agent))
			}
			return appendSections(old, secs, o.MaxSessionBytes, &took)
		})
		if err != nil {
			return sr, err
		}
		for _, s := range secs[:took] {
			sr.TurnsAdded += s.turns
		}
		secs = secs[took:]
		sr.Path = cur.path
		if !slices.Contains(sr.parts, cur.path) {
			sr.parts = append(sr.parts, cur.path)
		}
		if len(secs) > 0 {
			cur = part{n: cur.n + 1, path: filepath.Join(dir, stem+"-"+strconv.Itoa(cur.n+1)+".md")}
			sr.Created = true
		}
	}
	return sr, nil
}

// appendSections appends sections to a session file while it stays
// within limit bytes (at least one when the file has none), setting *took
// to how many. Each section is rendered by memfile.AppendSection, the
// first against the file (which closes whatever the file leaves open), the
// others on their own, so that a long import costs linear time; the result
// is parsed once to hold it to the same guarantee: the old sections, then
// exactly the new ones.
func appendSections(old []byte, secs []section, limit int64, took *int) ([]byte, error) {
	f, err := memfile.Parse(old)
	if err != nil {
		return nil, err
	}
	*took = 0
	out := bytes.Clone(old)
	var hs []string
	for i, s := range secs {
		base := []byte(nil)
		if i == 0 {
			base = old
		}
		next, err := memfile.AppendSection(base, s.heading, s.body)
		if err != nil {
			return nil, err
		}
		piece := next[len(base):]
		if int64(len(out)+len(piece)) > limit && (i > 0 || len(f.Sections) > 0) {
			break
		}
		out = append(out, piece...)
		hs = append(hs, s.heading)
		*took++
	}
	g, err := memfile.Parse(out)
	if err != nil {
		return nil, err
	}
	if len(g.Sections) != len(f.Sections)+len(hs) {
		return nil, fmt.Errorf("appending %d sections gave %d, want %d (please report this bug)", len(hs), len(g.Sections)-len(f.Sections), len(hs))
	}
	for i, h := range hs {
		if got := g.Sections[len(f.Sections)+i].Heading; got != h {
			return nil, fmt.Errorf("appended section %q reads back as %q (please report this bug)", h, got)
		}
	}
	return out, nil
}

// expire removes session files last written before cutoff, except those
// just written, and returns their paths.
func expire(dir string, cutoff time.Time, keep map[string]bool) ([]string, error) {
	files, err := listSessionFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if keep[f.path] || !f.info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
		os.Remove(atomicio.LockPath(f.path))
		os.Remove(f.path + atomicio.LockSuffix) // an earlier version's
		out = append(out, f.path)
	}
	return out, nil
}

// ensureMemory gives an agent that has sessions a memory file (the
// template, as spawn makes it: memory.Create) when it has none, so that
// it is an agent everywhere: listed, woken up, shown with its sessions.
func ensureMemory(ctx context.Context, h home.Home, agent string) (bool, error) {
	mem, err := h.MemoryPath(agent)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(mem); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	_, created, err := memory.Create(ctx, h, agent, "")
	return created, err
}
