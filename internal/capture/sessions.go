package capture

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// SessionInfo describes one session file of an agent.
type SessionInfo struct {
	Name     string    `json:"name"` // file name in the agent's sessions directory
	Path     string    `json:"path"`
	Title    string    `json:"title"`
	Bytes    int64     `json:"bytes"`
	Sections int       `json:"sections"`
	Last     string    `json:"last_heading,omitempty"`
	Modified time.Time `json:"modified"`
}

// List returns an agent's session files, most recently written first. An
// agent without sessions has none (no error).
func List(h home.Home, agent string) ([]SessionInfo, error) {
	dir, err := h.SessionsDir(agent)
	if err != nil {
		return nil, err
	}
	files, err := listSessionFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]SessionInfo, len(files))
	for i, sf := range files {
		s := SessionInfo{Name: sf.info.Name(), Path: sf.path, Bytes: sf.info.Size(), Modified: sf.info.ModTime().UTC()}
		if data, err := atomicio.ReadRegular(sf.path); err == nil {
			if f, err := memfile.Parse(data); err == nil {
				s.Sections = len(f.Sections)
				if n := len(f.Sections); n > 0 {
					s.Last = f.Sections[n-1].Heading
				}
				first, _, _ := strings.Cut(f.Header, "\n")
				s.Title = strings.TrimPrefix(strings.TrimSpace(first), "# ")
			}
		}
		out[i] = s
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Modified.Equal(out[j].Modified) {
			return out[i].Modified.After(out[j].Modified)
		}
		return out[i].Name > out[j].Name
	})
	return out, nil
}

// sessionFile is one session file of a directory.
type sessionFile struct {
	path string
	info fs.FileInfo
}

// listSessionFiles lists the session files of dir (its markdown files), with
// their file info; one removed meanwhile is left out. A missing dir has
// none.
func listSessionFiles(dir string) ([]sessionFile, error) {
	ents, err := home.MarkdownFiles(dir)
	if err != nil {
		return nil, err
	}
	files := make([]sessionFile, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files = append(files, sessionFile{filepath.Join(dir, e.Name()), info})
	}
	return files, nil
}
