package home

import (
	"errors"
	"path/filepath"
	"strings"
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
