package reflector

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/memfile"
)

func TestCorrectBacksUpFirst(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	before := memoryFile(3, 100)
	e.write("alice", before)
	b, err := e.r.Correct(t.Context(), "alice", func(old []byte) ([]byte, error) {
		out, _, err := memfile.RemoveSection(old, "note 1")
		return out, err
	})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(b.Path)
	if err != nil || !bytes.Equal(saved, before) {
		t.Fatalf("backup %s holds %d bytes (%v), want the file before the edit", b.Path, len(saved), err)
	}
	if got := e.read("alice"); bytes.Contains(got, []byte("marker-0001")) || !bytes.Contains(got, []byte("marker-0002")) {
		t.Errorf("the edit did not remove exactly section 1:\n%s", got)
	}

	// A failing edit leaves the file and no backup; no file is an error.
	n := len(e.backups("alice"))
	_, err = e.r.Correct(t.Context(), "alice", func([]byte) ([]byte, error) { return nil, errors.New("no") })
	if err == nil || len(e.backups("alice")) != n {
		t.Errorf("failed edit: err %v, %d backups (was %d)", err, len(e.backups("alice")), n)
	}
	if _, err := e.r.Correct(t.Context(), "bob", func(b []byte) ([]byte, error) { return b, nil }); err == nil || !strings.Contains(err.Error(), "no memory file") {
		t.Errorf("missing file: err = %v", err)
	}
	if _, err := os.Stat(e.path("bob")); !errors.Is(err, os.ErrNotExist) {
		t.Error("correcting a missing file created it")
	}
	if _, err := e.r.Correct(t.Context(), "../x", func(b []byte) ([]byte, error) { return b, nil }); err == nil {
		t.Error("a bad agent id was accepted")
	}
}

func TestKeepForgottenIsNotArchive(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	path, err := e.r.KeepForgotten(t.Context(), "alice", ForgottenEntry{Reason: "forgotten", Source: "hive/agents/alice/memory.md", Lines: "3-4", Text: "## 2026-11-10 — x\nbody"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(e.home.ForgottenRoot(), "alice", "2026-11.md"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	if _, err := e.r.KeepForgotten(t.Context(), "alice", ForgottenEntry{Reason: "forgotten", Source: "m", Lines: "9", Text: "a line\n"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, want := range []string{"# Forgotten — alice", "<!-- hivemem: forgotten 2026-11-29T13:51:00Z from hive/agents/alice/memory.md lines 3-4 -->\n## 2026-11-10 — x\nbody\n", "lines 9 -->\na line\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("forgotten file lacks %q:\n%s", want, got)
		}
	}
	if e.archiveText("alice") != "" {
		t.Error("forgotten text went to the archive")
	}
}

// A condensation archives a superseded section verbatim but leaves its
// outdated text out of the summary.
func TestCondenseLeavesSupersededTextOutOfTheSummary(t *testing.T) {
	sum := &fakeSum{}
	e := newEnv(t, sum)
	data := memoryFile(40, 1800)
	f := mustParse(t, data)
	old := f.Sections[2].Heading
	out, _, err := memfile.Supersede(data, old, "2026-12-01 — note 2 again", "marker-new\n")
	if err != nil {
		t.Fatal(err)
	}
	e.write("alice", out)
	res, err := e.r.Condense(t.Context(), "alice", Options{})
	if err != nil || res.Status != StatusCondensed {
		t.Fatalf("condense: %+v, %v", res, err)
	}
	req := sum.request()
	if n := len(req.Evicted); n != res.Evicted-1 {
		t.Errorf("summarised %d sections, want the %d evicted less the superseded one", n, res.Evicted)
	}
	for _, raw := range req.Evicted {
		if strings.Contains(raw, "marker-0002") {
			t.Error("the superseded section went to the summariser")
		}
	}
	if !strings.Contains(e.archiveText("alice"), "> superseded by: 2026-12-01 — note 2 again\nmarker-0002") {
		t.Error("the superseded section is not in the archive verbatim")
	}
}
