package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReadAgentFileRefusesAndFinds: a name with a directory or of no
// markdown file is ErrInvalid, a file the agent does not have ErrNotFound,
// and an archive file is read and parsed.
func TestReadAgentFileRefusesAndFinds(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "plan", Text: "A plan."}); err != nil {
		t.Fatal(err)
	}
	dir, _ := a.home.ArchiveDir("alice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2026-11.md"), []byte("# Archive\n\n## old\nOld.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  AgentFileRequest
		want error
	}{
		{"bad agent", AgentFileRequest{Agent: "../x", Kind: AgentFileArchive, Name: "2026-11.md"}, ErrInvalid},
		{"a path", AgentFileRequest{Agent: "alice", Kind: AgentFileArchive, Name: "../memory.md"}, ErrInvalid},
		{"not markdown", AgentFileRequest{Agent: "alice", Kind: AgentFileArchive, Name: "x.txt"}, ErrInvalid},
		{"bad kind", AgentFileRequest{Agent: "alice", Kind: "diary", Name: "2026-11.md"}, ErrInvalid},
		{"missing", AgentFileRequest{Agent: "alice", Kind: AgentFileSession, Name: "2026-11.md"}, ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := a.ReadAgentFile(ctx, c.req); !errors.Is(err, c.want) {
				t.Errorf("ReadAgentFile = %v, want %v", err, c.want)
			}
		})
	}
	m, err := a.ReadAgentFile(ctx, AgentFileRequest{Agent: "alice", Kind: AgentFileArchive, Name: "2026-11.md"})
	if err != nil || len(m.Sections) != 1 || m.Sections[0].Heading != "old" {
		t.Fatalf("ReadAgentFile(archive) = %+v, %v", m, err)
	}
	files, err := a.AgentFiles(ctx, "alice")
	if err != nil || len(files.Archives) != 1 || files.Archives[0] != "2026-11.md" {
		t.Errorf("AgentFiles = %+v, %v", files, err)
	}
}
