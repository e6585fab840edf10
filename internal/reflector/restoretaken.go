package reflector

import (
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
)

// takenOut is what restoring restored over cur takes out of the memory
// file, as sections for the archive (see appendArchive), so that a
// restore never makes a line unrecoverable: each ordinary section of cur
// that restored does not hold, verbatim; then, in one section dated now
// and naming the backup, every other line of cur (its header, pinned
// facts, condensed history) that stands nowhere in restored. Blank lines
// and the pointer to the archive are not text of their own. A cur that is
// not a memory file (invalid UTF-8, a NUL byte) is read with those bytes
// replaced, so its lines are kept as far as they are text.
func takenOut(cur, restored []byte, backup string, now time.Time) []memfile.Section {
	f, err := memfile.Parse(cur)
	if err != nil {
		text := strings.ReplaceAll(strings.ToValidUTF8(string(cur), "\uFFFD"), "\x00", "\uFFFD")
		if f, err = memfile.Parse([]byte(text)); err != nil {
			return nil
		}
	}
	g, err := memfile.Parse(restored)
	if err != nil {
		return nil
	}
	kept := map[string]bool{}
	for _, s := range g.Recent() {
		kept[trimSection(s.Raw)] = true
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(restored), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	var out []memfile.Section
	var loose []string
	take := func(text string) {
		for _, l := range strings.Split(text, "\n") {
			t := strings.TrimSpace(l)
			if t == "" || lines[t] || strings.HasPrefix(t, memfile.ArchivePointerPrefix) {
				continue
			}
			lines[t] = true // once, however often cur has it
			loose = append(loose, strings.TrimRight(l, "\r"))
		}
	}
	take(f.Header)
	for _, s := range f.Sections {
		switch {
		case s.Kind != memfile.KindSection:
			take(s.Body())
		case !kept[trimSection(s.Raw)]:
			out = append(out, s)
		}
	}
	if len(loose) == 0 {
		return out
	}
	heading := now.UTC().Format("2006-01-02") + " — lines taken out by restoring backup " + backup
	raw, sec, err := memfile.AppendNewSection(nil, heading, strings.Join(loose, "\n")+"\n")
	if err != nil {
		return out
	}
	sec.Raw = string(raw)
	return append([]memfile.Section{sec}, out...)
}

// trimSection is a section without the blank lines at its end, which
// depend on what follows it in its file.
func trimSection(raw string) string { return strings.TrimRight(raw, " \t\r\n") }
