package capture

import (
	"errors"
	"io/fs"
	"os"
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
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".md") || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		s := SessionInfo{Name: e.Name(), Path: p, Bytes: info.Size(), Modified: info.ModTime().UTC()}
		if data, err := atomicio.ReadRegular(p); err == nil {
			if f, err := memfile.Parse(data); err == nil {
				s.Sections = len(f.Sections)
				if n := len(f.Sections); n > 0 {
					s.Last = f.Sections[n-1].Heading
				}
				first, _, _ := strings.Cut(f.Header, "\n")
				s.Title = strings.TrimPrefix(strings.TrimSpace(first), "# ")
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Modified.Equal(out[j].Modified) {
			return out[i].Modified.After(out[j].Modified)
		}
		return out[i].Name > out[j].Name
	})
	return out, nil
}
