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

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/home"
)

// Kinds of an agent's files besides its memory file.
const (
	AgentFileArchive = "archive" // hive/archive/<agent>/: evicted sections, replaced facts
	AgentFileSession = "session" // hive/agents/<agent>/sessions/: imported conversations
)

// AgentFiles are an agent's files besides its memory file.
type AgentFiles struct {
	Archives []string      `json:"archives"` // file names, in directory order
	Sessions []SessionInfo `json:"sessions"` // newest first
}

// SessionInfo is one of an agent's imported session files.
type SessionInfo struct {
	Name     string    `json:"name"` // file name in the agent's sessions directory
	Title    string    `json:"title"`
	Bytes    int64     `json:"bytes"`
	Sections int       `json:"sections"`
	Last     string    `json:"last_heading,omitempty"`
	Modified time.Time `json:"modified"`
}

// AgentFiles lists the agent's archive files (regular .md files) and its
// imported sessions. A bad id is ErrInvalid; an agent without either has
// none (no error).
func (a *App) AgentFiles(ctx context.Context, agent string) (AgentFiles, error) {
	var out AgentFiles
	dir, err := a.home.ArchiveDir(agent)
	if err != nil {
		return out, invalid(err)
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
				out.Archives = append(out.Archives, e.Name())
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	ss, err := capture.List(a.home, agent)
	if err != nil {
		return out, fmt.Errorf("sessions of %s: %w", agent, err)
	}
	for _, s := range ss {
		out.Sessions = append(out.Sessions, SessionInfo{Name: s.Name, Title: s.Title, Bytes: s.Bytes, Sections: s.Sections, Last: s.Last, Modified: s.Modified})
	}
	return out, nil
}

// AgentFileRequest names one of an agent's archive or session files.
type AgentFileRequest struct {
	Agent string `json:"agent"`
	Kind  string `json:"kind"` // AgentFileArchive or AgentFileSession
	Name  string `json:"name"` // a file name, no directory
}

// ReadAgentFile reads one archive or session file of an agent and parses
// it into its regions, as Memory does a memory file: links stay in the
// home and a FIFO or device is a clear error, never a hang. A bad id,
// kind or name is ErrInvalid, a file that does not exist ErrNotFound.
func (a *App) ReadAgentFile(ctx context.Context, r AgentFileRequest) (Memory, error) {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return Memory{}, invalid(err)
	}
	if r.Name == "" || r.Name != filepath.Base(r.Name) || strings.HasPrefix(r.Name, ".") || !strings.HasSuffix(r.Name, ".md") {
		return Memory{}, badRequest("%s file %q: want a file name ending in .md", r.Kind, r.Name)
	}
	var dir string
	read := a.home.ReadFile
	switch r.Kind {
	case AgentFileArchive:
		dir, _ = a.home.ArchiveDir(r.Agent)
	case AgentFileSession:
		dir, _ = a.home.SessionsDir(r.Agent)
		read = atomicio.ReadRegular
	default:
		return Memory{}, badRequest("file kind %q: want %s or %s", r.Kind, AgentFileArchive, AgentFileSession)
	}
	path := filepath.Join(dir, r.Name)
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Memory{}, notFound("agent %s has no %s file %s", r.Agent, r.Kind, r.Name)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("read %s: %w", r.Kind, err)
	}
	if err := ctx.Err(); err != nil {
		return Memory{}, err
	}
	return MemoryOf(MemoryFile{Agent: r.Agent, Source: a.home.Rel(path), Path: path, Data: data}), nil
}
