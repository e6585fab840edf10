// Package home resolves the hivemem home directory, validates agent ids and
// builds every path under the home from a validated id, so no raw input ever
// becomes a path.
package home

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxAgentIDLen is the longest agent id accepted.
const MaxAgentIDLen = 64

// ErrInvalidAgentID is wrapped by every agent id validation failure.
var ErrInvalidAgentID = errors.New("invalid agent id")

// ValidateAgentID accepts ids of the form [a-z0-9][a-z0-9._-]{0,63}, except
// ones made only of dots, and explains what is wrong with anything else.
func ValidateAgentID(id string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s (want [a-z0-9][a-z0-9._-]{0,63})", ErrInvalidAgentID, id, why)
	}
	switch {
	case id == "":
		return fmt.Errorf("%w: empty (want [a-z0-9][a-z0-9._-]{0,63})", ErrInvalidAgentID)
	case len(id) > MaxAgentIDLen:
		return fmt.Errorf("%w: %d bytes long, at most %d allowed", ErrInvalidAgentID, len(id), MaxAgentIDLen)
	case strings.ContainsRune(id, 0):
		return fmt.Errorf("%w: contains a NUL byte", ErrInvalidAgentID)
	case strings.Contains(id, ".."):
		return bad(`contains ".."`)
	case strings.ContainsAny(id, `/\`):
		return bad("contains a path separator")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		lowerOrDigit := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if i == 0 && !lowerOrDigit {
			return bad("must start with a lowercase letter or digit")
		}
		if !lowerOrDigit && c != '.' && c != '_' && c != '-' {
			return bad(fmt.Sprintf("character %q is not allowed", rune(c)))
		}
	}
	return nil
}

// Home is a resolved hivemem home directory.
type Home struct {
	Root string
}

// Resolve picks the home: an explicit directory, else $HIVEMEM_HOME, else
// $XDG_DATA_HOME/hivemem, else ~/.local/share/hivemem.
func Resolve(dir string) (Home, error) {
	if dir == "" {
		dir = os.Getenv("HIVEMEM_HOME")
	}
	if dir == "" {
		dir = DataDir()
		if dir == "" {
			return Home{}, errors.New("cannot find a home directory: set HIVEMEM_HOME or pass --home")
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Home{}, fmt.Errorf("resolve home %s: %w", dir, err)
	}
	return Home{Root: abs}, nil
}

// DataDir is hivemem's per-user data directory ($XDG_DATA_HOME/hivemem),
// which holds the default home and the model cache; "" if it cannot be found.
func DataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "hivemem")
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return ""
	}
	return filepath.Join(h, ".local", "share", "hivemem")
}

// Init creates the home layout; existing files are left alone.
func (h Home) Init() error {
	for _, d := range []string{h.AgentsDir(), h.ArchiveRoot(), h.BackupsDir(), h.PalaceDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("init home %s: %w", h.Root, err)
		}
	}
	return nil
}

// IDPath is where the home's id is kept (see ID).
func (h Home) IDPath() string { return filepath.Join(h.Root, "home-id") }

// ID names this home among the machines that share one palace: the host
// name and random hex ("build-7-3f9a1c2e"), made on first use and kept in
// IDPath. Mined files record it, so each home removes and reindexes only
// its own files in a shared palace. Two processes creating it at once
// agree: the file is linked into place only if absent, and both read it.
func (h Home) ID() (string, error) {
	if id, err := readID(h.IDPath()); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return -1
	}, host)
	if host == "" {
		host = "home"
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("home id: %w", err)
	}
	tmp, err := os.CreateTemp(h.Root, ".home-id-*")
	if err != nil {
		return "", fmt.Errorf("home id: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := fmt.Fprintf(tmp, "%s-%s\n", host, hex.EncodeToString(b[:]))
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return "", fmt.Errorf("home id: %w", err)
	}
	if err := os.Link(tmp.Name(), h.IDPath()); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("home id: %w", err)
	}
	return readID(h.IDPath())
}

func readID(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if id == "" || len(id) > 200 || strings.ContainsAny(id, "\x00\n") {
		return "", fmt.Errorf("home id in %s is malformed: delete it and a new one is made", path)
	}
	return id, nil
}

// Exists reports whether the home has been initialised.
func (h Home) Exists() bool {
	st, err := os.Stat(h.AgentsDir())
	return err == nil && st.IsDir()
}

// HiveDir is the directory holding agents, archives, backups and the log.
func (h Home) HiveDir() string { return filepath.Join(h.Root, "hive") }

// AgentsDir holds one directory per agent.
func (h Home) AgentsDir() string { return filepath.Join(h.Root, "hive", "agents") }

// ArchiveRoot holds the per-agent archives of evicted sections.
func (h Home) ArchiveRoot() string { return filepath.Join(h.Root, "hive", "archive") }

// ForgottenRoot holds, per agent, what `forget` took out of memory
// files: kept so nothing is lost, never mined, so search no longer finds it.
func (h Home) ForgottenRoot() string { return filepath.Join(h.Root, "hive", "forgotten") }

// ForgottenDir is the forgotten-text directory of a validated agent.
func (h Home) ForgottenDir(id string) (string, error) {
	if err := ValidateAgentID(id); err != nil {
		return "", err
	}
	return filepath.Join(h.ForgottenRoot(), id), nil
}

// BackupsDir holds pre-condense copies.
func (h Home) BackupsDir() string { return filepath.Join(h.Root, "hive", "backups") }

// LogPath is the JSONL event log.
func (h Home) LogPath() string { return filepath.Join(h.Root, "hive", "log.jsonl") }

// PalaceDir holds the index.
func (h Home) PalaceDir() string { return filepath.Join(h.Root, "palace") }

// ConfigPath is the optional config file.
func (h Home) ConfigPath() string { return filepath.Join(h.Root, "config.toml") }

// AgentDir is the directory of a validated agent.
func (h Home) AgentDir(id string) (string, error) { return agentPath(id, h.AgentsDir(), id) }

// MemoryPath is the memory file of a validated agent.
func (h Home) MemoryPath(id string) (string, error) {
	return agentPath(id, h.AgentsDir(), id, "memory.md")
}

// ArchiveDir is the archive directory of a validated agent.
func (h Home) ArchiveDir(id string) (string, error) { return agentPath(id, h.ArchiveRoot(), id) }

// SessionsDir holds a validated agent's imported conversations, one
// markdown file each (hive/agents/<id>/sessions/).
func (h Home) SessionsDir(id string) (string, error) {
	return agentPath(id, h.AgentsDir(), id, "sessions")
}

// agentPath joins elem once the agent id is known to be valid.
func agentPath(id string, elem ...string) (string, error) {
	if err := ValidateAgentID(id); err != nil {
		return "", err
	}
	return filepath.Join(elem...), nil
}

// SessionFromPath recognises hive/agents/<id>/sessions/*.md under the home
// and returns the agent id.
func (h Home) SessionFromPath(path string) (id string, ok bool) {
	parts := strings.Split(h.Rel(path), "/")
	if len(parts) == 5 && parts[0] == "hive" && parts[1] == "agents" && parts[3] == "sessions" &&
		strings.HasSuffix(parts[4], ".md") && ValidateAgentID(parts[2]) == nil {
		return parts[2], true
	}
	return "", false
}

// Rel returns path relative to the home when it lies inside it (with forward
// slashes, the form stored in the index), else the cleaned absolute path.
func (h Home) Rel(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(path))
	}
	rel, err := filepath.Rel(h.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// Abs turns a stored source back into a filesystem path.
func (h Home) Abs(source string) string {
	p := filepath.FromSlash(source)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(h.Root, p)
}

// Agents lists the ids of agent directories that hold a memory.md, sorted.
// Directories whose names are not valid ids are skipped.
func (h Home) Agents() ([]string, error) {
	ents, err := ReadDir(h.AgentsDir())
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if !IsDir(h.AgentsDir(), e) || ValidateAgentID(e.Name()) != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(h.AgentsDir(), e.Name(), "memory.md")); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// ReadDir is os.ReadDir for a directory of the home that may not exist
// yet (a home without agents or backups, an agent without archive or
// sessions): a missing directory has no entries.
func ReadDir(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}

// MarkdownFiles lists the markdown files of dir in name order: the regular
// files named *.md, hidden ones (an atomic write's temp file, a lock file)
// left out. A missing directory has none.
func MarkdownFiles(dir string) ([]fs.DirEntry, error) {
	ents, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	md := ents[:0]
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
			md = append(md, e)
		}
	}
	return md, nil
}

// IsDir reports whether the entry e of directory parent is a directory or
// a symlink to one. (Whether a link may be followed is Contain's to say,
// when the files under it are read: a link out of the home is listed, so
// that it is refused with a reason rather than ignored.)
func IsDir(parent string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(filepath.Join(parent, e.Name()))
	return err == nil && st.IsDir()
}

// AgentFromPath recognises hive/agents/<id>/memory.md and
// hive/archive/<id>/*.md under the home and returns the agent id and whether
// the file is an archive.
func (h Home) AgentFromPath(path string) (id string, archive bool, ok bool) {
	rel := h.Rel(path)
	parts := strings.Split(rel, "/")
	if len(parts) == 4 && parts[0] == "hive" && ValidateAgentID(parts[2]) == nil {
		switch {
		case parts[1] == "agents" && parts[3] == "memory.md":
			return parts[2], false, true
		case parts[1] == "archive" && strings.HasSuffix(parts[3], ".md"):
			return parts[2], true, true
		}
	}
	return "", false, false
}
