package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestValidateAgentID(t *testing.T) {
	good := []string{"a", "0", "alice", "agent-7", "a.b_c-d", strings.Repeat("x", 64)}
	for _, id := range good {
		if err := ValidateAgentID(id); err != nil {
			t.Errorf("ValidateAgentID(%q) = %v, want nil", id, err)
		}
	}
	bad := map[string]string{
		"":                      "empty",
		"..":                    `".."`,
		"a..b":                  `".."`,
		"a/b":                   "separator",
		`a\b`:                   "separator",
		"a\x00b":                "NUL",
		"Alice":                 "must start",
		"alIce":                 "not allowed",
		"-a":                    "must start",
		".hidden":               "must start",
		"a b":                   "not allowed",
		"é":                     "must start",
		strings.Repeat("x", 65): "at most 64",
	}
	for id, want := range bad {
		err := ValidateAgentID(id)
		if err == nil {
			t.Errorf("ValidateAgentID(%q) = nil, want error", id)
			continue
		}
		if !errors.Is(err, ErrInvalidAgentID) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateAgentID(%q) = %v, want ErrInvalidAgentID mentioning %q", id, err, want)
		}
	}
}

func TestPathsAndAgents(t *testing.T) {
	h := Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.MemoryPath("../etc"); err == nil {
		t.Fatal("MemoryPath accepted a path trick")
	}
	p, err := h.MemoryPath("alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Rel(p); got != "hive/agents/alice/memory.md" {
		t.Fatalf("Rel = %q", got)
	}
	if id, arch, ok := h.AgentFromPath(p); !ok || arch || id != "alice" {
		t.Fatalf("AgentFromPath = %q %v %v", id, arch, ok)
	}
	a := filepath.Join(h.ArchiveRoot(), "bob", "2026-11.md")
	if id, arch, ok := h.AgentFromPath(a); !ok || !arch || id != "bob" {
		t.Fatalf("AgentFromPath(archive) = %q %v %v", id, arch, ok)
	}
	if _, _, ok := h.AgentFromPath("/elsewhere/memory.md"); ok {
		t.Fatal("AgentFromPath recognised a path outside the home")
	}
	if h.Abs("hive/agents/alice/memory.md") != p {
		t.Fatal("Abs does not invert Rel")
	}
}

// TestID: a home's id is made once and then stable, the same for
// processes racing to make it, and distinct between homes.
func TestID(t *testing.T) {
	h := Home{Root: t.TempDir()}
	ids := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() { ids[i], errs[i] = h.ID() })
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] || ids[i] == "" {
			t.Fatalf("concurrent ID() = %q, %v; want one id for all (first %q)", ids[i], errs[i], ids[0])
		}
	}
	if again, err := h.ID(); err != nil || again != ids[0] {
		t.Fatalf("ID() again = %q, %v; want %q", again, err, ids[0])
	}
	other, err := Home{Root: t.TempDir()}.ID()
	if err != nil || other == ids[0] {
		t.Fatalf("another home's ID() = %q, %v; want a different id", other, err)
	}
	if err := os.WriteFile(h.IDPath(), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ID(); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("ID() of an empty id file = %v, want a malformed error", err)
	}
}
