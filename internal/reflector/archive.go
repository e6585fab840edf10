package reflector

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// archiveLockName names the lock (in the agent's archive directory) that
// serialises every archive write of one agent across processes: the
// "already archived?" check, the choice of the part file and the append
// happen under it, so two condensations can never both append a section.
const archiveLockName = ".archive"

// archivePartRE matches the archive files of a month: <YYYY-MM>.md, then
// <YYYY-MM>-2.md, <YYYY-MM>-3.md, ... once a part reaches the size limit.
var archivePartRE = regexp.MustCompile(`^(\d{4}-\d{2})(?:-([1-9]\d*))?\.md$`)

// archivePartName is the file name of part n (1-based) of a month.
func archivePartName(month string, n int) string {
	if n <= 1 {
		return month + ".md"
	}
	return month + "-" + strconv.Itoa(n) + ".md"
}

// archiveHeader starts every archive file.
func archiveHeader(agent string) string { return "# Archive — " + agent + "\n\n" }

// archivePath is the file evicted sections go to now: the last part of the
// current month's archive. Sections are filed by when they were archived,
// so every archive file only ever grows at its end.
func (r *Reflector) archivePath(agent string, now time.Time) (string, error) {
	dir, err := r.home.ArchiveDir(agent)
	if err != nil {
		return "", err
	}
	month := now.UTC().Format("2006-01")
	return filepath.Join(dir, archivePartName(month, lastPart(dir, month))), nil
}

// lastPart returns the highest part number of month's archive in dir (1
// when there is none yet).
func lastPart(dir, month string) int {
	ents, _ := os.ReadDir(dir)
	n := 1
	for _, e := range ents {
		m := archivePartRE.FindStringSubmatch(e.Name())
		if m == nil || m[1] != month || m[2] == "" {
			continue
		}
		if k, err := strconv.Atoi(m[2]); err == nil && k > n {
			n = k
		}
	}
	return n
}

// readArchive returns the contents of every archive file of agent (a
// missing directory is an empty archive). Temp files are skipped.
func (r *Reflector) readArchive(agent string) ([][]byte, error) {
	dir, err := r.home.ArchiveDir(agent)
	if err != nil {
		return nil, err
	}
	ents, err := home.MarkdownFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("read archive %s: %w", dir, err)
	}
	out := make([][]byte, 0, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// firstLine is s up to its first line break (without it).
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSuffix(s[:i], "\r")
	}
	return s
}

// archiveIndex answers "is this section verbatim in the archive?" for many
// sections in one pass over the archive: it records where each line that
// is the heading line of a section asked about starts, and compares the
// section's bytes only there. (A bytes.Contains per section would scan the
// whole archive once per section: hours for a 50 MB file's thousands of
// sections.) Every archived section starts at the start of a line, as
// appendArchive writes them.
type archiveIndex struct {
	files [][]byte
	at    map[string][][2]int // heading line → (file, offset) of each occurrence
}

func newArchiveIndex(files [][]byte, sections []memfile.Section) *archiveIndex {
	ix := &archiveIndex{files: files, at: make(map[string][][2]int, len(sections))}
	for _, s := range sections {
		ix.at[firstLine(s.Raw)] = nil
	}
	for fi, f := range files {
		for off := 0; off < len(f); {
			end := bytes.IndexByte(f[off:], '\n')
			next := len(f)
			line := f[off:]
			if end >= 0 {
				line, next = f[off:off+end], off+end+1
			}
			line = bytes.TrimSuffix(line, []byte("\r"))
			if occ, ok := ix.at[string(line)]; ok {
				ix.at[string(line)] = append(occ, [2]int{fi, off})
			}
			off = next
		}
	}
	return ix
}

// has reports whether raw (one of the sections the index was built for)
// stands verbatim in the archive.
func (ix *archiveIndex) has(raw string) bool {
	for _, o := range ix.at[firstLine(raw)] {
		if bytes.HasPrefix(ix.files[o[0]][o[1]:], []byte(raw)) {
			return true
		}
	}
	return false
}

// appendArchive appends the evicted sections, verbatim, to the agent's
// archive, atomically, under the agent's archive lock. It is idempotent:
// a section already in the archive word for word (left there by an earlier
// attempt that aborted after archiving, or by a condensation racing this
// one) is not appended twice — the check runs under the lock, so two
// writers cannot both find a section missing. A part file never grows past
// limit bytes (palace.max_file_bytes, so that the miner indexes every
// part): the sections that would not fit go to the next part,
// <month>-2.md and so on; only a single section bigger than limit makes a
// part over it. It returns the paths of the files it wrote (none when
// everything was archived already) and how many sections it appended.
func (r *Reflector) appendArchive(ctx context.Context, agent string, evicted []memfile.Section, limit int64) ([]string, int, error) {
	dir, err := r.home.ArchiveDir(agent)
	if err != nil {
		return nil, 0, err
	}
	// Never archive through a link out of the home.
	if err := r.home.MkdirAll(dir); err != nil {
		return nil, 0, fmt.Errorf("create archive directory: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	defer cancel()
	unlock, err := atomicio.Lock(lctx, filepath.Join(dir, archiveLockName))
	if err != nil {
		return nil, 0, fmt.Errorf("lock archive of %s: %w", agent, err)
	}
	defer func() { _ = unlock() }()

	existing, err := r.readArchive(agent)
	if err != nil {
		return nil, 0, err
	}
	ix := newArchiveIndex(existing, evicted)
	var add []string
	for _, s := range evicted {
		if !ix.has(s.Raw) {
			add = append(add, s.Raw)
		}
	}
	if len(add) == 0 {
		return nil, 0, nil
	}

	month := r.now().UTC().Format("2006-01")
	part := lastPart(dir, month)
	var written []string
	appended := 0
	for len(add) > 0 {
		path := filepath.Join(dir, archivePartName(month, part))
		var taken int
		err := atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
			var b bytes.Buffer
			if len(old) == 0 {
				b.WriteString(archiveHeader(agent))
			} else {
				b.Write(old)
				if !bytes.HasSuffix(old, []byte("\n")) {
					b.WriteByte('\n')
				}
			}
			taken = 0
			for _, raw := range add {
				n := int64(len(raw))
				if !strings.HasSuffix(raw, "\n") {
					n++
				}
				// Roll over before the limit; a part takes at least one
				// section, or a huge one would never be archived.
				if limit > 0 && int64(b.Len())+n > limit && (taken > 0 || len(old) > 0) {
					break
				}
				b.WriteString(raw)
				if !strings.HasSuffix(raw, "\n") {
					b.WriteByte('\n')
				}
				taken++
			}
			if taken == 0 {
				return old, nil // full: the next part takes them
			}
			return b.Bytes(), nil
		})
		if err != nil {
			return written, appended, fmt.Errorf("append to archive %s: %w", path, err)
		}
		if taken > 0 {
			written = append(written, path)
			add = add[taken:]
			appended += taken
		}
		part++
	}
	return written, appended, nil
}
