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

// TestContainFollowsSymlinksOnlyInsideTheHome: the one symlink rule,
// through a home that is itself reached through a link.
func TestContainFollowsSymlinksOnlyInsideTheHome(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(real, "hive", "agents", "a"), filepath.Join(real, "notes"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(real, link))
	h := Home{Root: link}
	agent := filepath.Join(link, "hive", "agents", "a")
	must(os.WriteFile(filepath.Join(real, "notes", "n.md"), []byte("x"), 0o644))
	must(os.Symlink("../../../notes/n.md", filepath.Join(agent, "in.md")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(agent, "out.md")))
	must(os.Symlink(filepath.Join(outside, "missing"), filepath.Join(agent, "dangling-out.md")))
	must(os.Symlink("missing-here.md", filepath.Join(agent, "dangling-in.md")))
	must(os.Symlink("loop.md", filepath.Join(agent, "loop.md")))
	must(os.Symlink(outside, filepath.Join(link, "hive", "agents", "b")))
	for _, tc := range []struct {
		path, want, err string
	}{
		{filepath.Join(agent, "memory.md"), filepath.Join(link, "hive", "agents", "a", "memory.md"), ""},
		{filepath.Join(real, "hive", "agents", "a", "memory.md"), filepath.Join(link, "hive", "agents", "a", "memory.md"), ""},
		{filepath.Join(agent, "in.md"), filepath.Join(link, "notes", "n.md"), ""},
		{filepath.Join(agent, "dangling-in.md"), filepath.Join(link, "hive", "agents", "a", "missing-here.md"), ""},
		{filepath.Join(agent, "out.md"), "", "leads out of the home"},
		{filepath.Join(agent, "dangling-out.md"), "", "leads out of the home"},
		{filepath.Join(link, "hive", "agents", "b", "memory.md"), "", "leads out of the home"},
		{filepath.Join(agent, "loop.md"), "", "too many"},
		{filepath.Join(outside, "x.md"), "", "leads out of the home"},
	} {
		got, err := h.Contain(tc.path)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Contain(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Contain(%s) = %q, %v; want an error containing %q", tc.path, got, err, tc.err)
		case tc.err == "leads out of the home" && !errors.Is(err, ErrOutsideHome):
			t.Errorf("Contain(%s): %v does not wrap ErrOutsideHome", tc.path, err)
		}
	}
	if _, err := h.ReadFile(filepath.Join(agent, "out.md")); !errors.Is(err, ErrOutsideHome) {
		t.Errorf("ReadFile through a link out: %v", err)
	}
	if data, err := h.ReadFile(filepath.Join(agent, "in.md")); err != nil || string(data) != "x" {
		t.Errorf("ReadFile through a link inside: %q %v", data, err)
	}
}

// TestMkdirAllStaysInTheHome: MkdirAll makes a directory of the home and
// its parents, follows a link that stays inside, and refuses one that
// leads out (a dangling one too) without creating anything through it.
func TestMkdirAllStaysInTheHome(t *testing.T) {
	base := t.TempDir()
	h := Home{Root: filepath.Join(base, "home")}
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(h.Root, "hive", "archive"), filepath.Join(h.Root, "elsewhere"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, to := range map[string]string{"out": outside, "dangling": filepath.Join(outside, "gone"), "in": filepath.Join(h.Root, "elsewhere")} {
		if err := os.Symlink(to, filepath.Join(h.Root, "hive", "archive", name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{filepath.Join(h.Root, "hive", "sessions", "a", "b"), true},
		{filepath.Join(h.Root, "hive", "archive", "in", "x"), true},
		{filepath.Join(h.Root, "hive", "archive", "out"), false},
		{filepath.Join(h.Root, "hive", "archive", "out", "x"), false},
		{filepath.Join(h.Root, "hive", "archive", "dangling"), false},
	} {
		err := h.MkdirAll(tc.dir)
		if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrOutsideHome) {
			t.Errorf("MkdirAll(%s) = %v, want ok %v", tc.dir, err, tc.ok)
		}
		if st, serr := os.Stat(tc.dir); tc.ok && (serr != nil || !st.IsDir()) {
			t.Errorf("MkdirAll(%s) made no directory: %v", tc.dir, serr)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("created outside the home: %v", ents)
	}
}
