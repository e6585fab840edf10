package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// Supersede is Remember for a note that replaces an earlier
// section of the agent's memory file (ref: its heading, see
// memfile.FindSection): in one locked, atomic write the new section is
// appended with a "> supersedes:" line and the old one gets a "> superseded
// by:" line. It reports the section appended and the one replaced, as
// the file stood after the write (FileWrite). Its errors after
// CheckRemember's leave the operation for the caller to name.
func Supersede(ctx context.Context, h home.Home, agent, ref, heading, text string, now time.Time) (FileWrite, error) {
	if err := CheckRemember(heading, text); err != nil {
		return FileWrite{}, err
	}
	full := sectionHeading(heading, text, now)
	path, err := h.MemoryPath(agent)
	if err != nil {
		return FileWrite{}, err
	}
	if _, err := h.ReadFile(path); err != nil {
		return FileWrite{}, fmt.Errorf("--supersedes: agent %s has no memory file to supersede a section of", agent)
	}
	w := FileWrite{Added: true}
	_, err = update(ctx, h, agent, agent, func(data []byte) ([]byte, error) {
		out, old, added, err := memfile.SupersedeSection(data, ref, full, text)
		w.Superseded, w.Section = old, added
		return out, err
	})
	if err != nil {
		return FileWrite{}, err // the caller names the operation (remember: ...)
	}
	return w, nil
}

// MarkSuperseded marks the section ref names as replaced by the later
// section by (both headings, see memfile.FindSection) in one locked,
// atomic write that adds nothing else: for a note the agent wrote before
// saying what it replaces. FileWrite's Section is by, Superseded ref's.
func MarkSuperseded(ctx context.Context, h home.Home, agent, ref, by string) (FileWrite, error) {
	path, err := h.MemoryPath(agent)
	if err != nil {
		return FileWrite{}, err
	}
	if _, err := h.ReadFile(path); err != nil {
		return FileWrite{}, fmt.Errorf("--supersedes: agent %s has no memory file to supersede a section of", agent)
	}
	var w FileWrite
	_, err = update(ctx, h, agent, agent, func(data []byte) ([]byte, error) {
		out, old, cur, err := memfile.MarkSuperseded(data, ref, by)
		w.Superseded, w.Section = old, cur
		return out, err
	})
	if err != nil {
		return FileWrite{}, err
	}
	return w, nil
}
