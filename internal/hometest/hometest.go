// Package hometest holds the helpers tests share for whole homes: a fresh
// home (empty, or with a config and memory files) and a palace over it, a model directory that does not load, the
// index of a palace as a comparable dump and a fresh mine of the same files
// to compare it with, and what an agent's archive holds. Helpers that open an app are in
// internal/app/apptest (app is above the reflector, which uses these).
package hometest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// New is an initialised home in a new temporary directory.
func New(t testing.TB) home.Home {
	t.Helper()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	return h
}

// NewWith is New with configTOML as its config.toml (none when empty) and
// the given memory files (agent id → content).
func NewWith(t testing.TB, configTOML string, files map[string]string) home.Home {
	t.Helper()
	h := New(t)
	if configTOML != "" {
		filetest.Write(t, h.ConfigPath(), configTOML)
	}
	for agent, content := range files {
		WriteMemory(t, h, agent, content)
	}
	return h
}

// WriteMemory writes content as agent's memory file in h, making the
// agent's directory first, the way an agent writes it (no lock), and
// returns the file's path.
func WriteMemory(t testing.TB, h home.Home, agent, content string) string {
	t.Helper()
	p, err := h.MemoryPath(agent)
	if err != nil {
		t.Fatal(err)
	}
	filetest.Write(t, p, content)
	return p
}

// ReadMemory reads and parses the memory file at path: its text and its
// sections.
func ReadMemory(t testing.TB, path string) (string, *memfile.File) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), f
}

// Palace is a palace over h's own SQLite index (in its palace directory),
// with embedder emb (nil: lexical only); the index is closed when the test
// ends.
func Palace(t testing.TB, h home.Home, emb palace.Embedder, popts palace.Options) (*palace.Palace, *sqlite.Store) {
	t.Helper()
	return openPalace(t, h, filepath.Join(h.PalaceDir(), "palace.db"), emb, popts)
}

func openPalace(t testing.TB, h home.Home, db string, emb palace.Embedder, popts palace.Options) (*palace.Palace, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return PalaceOver(t, h, st, emb, popts), st
}

// PalaceOver is a palace for h over the store st (of any backend), with
// embedder emb (nil: lexical only); st is closed when the test ends.
func PalaceOver(t testing.TB, h home.Home, st store.Store, emb palace.Embedder, popts palace.Options) *palace.Palace {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	p, err := palace.New(context.Background(), h, st, emb, popts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BrokenModelDir is a MiniLM model directory whose files are not a model
// (what a truncated download looks like).
func BrokenModelDir(t testing.TB) string {
	t.Helper()
	model := t.TempDir()
	for _, f := range []string{"model.fp16.safetensors", "tokenizer.json", "config.json"} {
		if err := os.WriteFile(filepath.Join(model, f), []byte("not a model"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return model
}

// Drawers is an index as drawer id → every field a search shows of it.
func Drawers(ctx context.Context, st store.Store) (map[string]string, error) {
	ds, err := st.List(ctx, store.Filter{}, 0)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ds))
	for _, d := range ds {
		out[d.ID] = fmt.Sprintf("%s:%d-%d [%s/%s/%s] date=%q heading=%q text=%q superseded_by=%q", d.Source, d.LineStart, d.LineEnd,
			d.Wing, d.Room, d.Agent, d.Date, d.Heading, d.Text, d.SupersededBy)
	}
	return out, nil
}

// FreshPalace mines the hive of h into a palace over a brand-new SQLite
// index, with embedder emb (nil: lexical only): the reference an
// incrementally kept index must equal. The index is closed when the test
// ends (closing it before is harmless).
func FreshPalace(t testing.TB, h home.Home, emb palace.Embedder, popts palace.Options) (*palace.Palace, store.Store) {
	t.Helper()
	p, st := openPalace(t, h, filepath.Join(t.TempDir(), "fresh.db"), emb, popts)
	if _, err := p.Mine(context.Background(), h.HiveDir(), palace.MineOptions{}); err != nil {
		t.Fatalf("fresh mine: %v", err)
	}
	return p, st
}

// ArchivedHeadings counts each section heading over the archive files
// (*.md, not hidden) in dir, failing on one that does not parse.
func ArchivedHeadings(t testing.TB, dir string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f, err := memfile.Parse(data)
		if err != nil {
			t.Fatalf("archive %s does not parse: %v", e.Name(), err)
		}
		for _, s := range f.Recent() {
			n[s.Heading]++
		}
	}
	return n
}

// AssertNoneInHome fails the test for each needle found in any byte of
// any file under root (the hive, palace.db and its WAL, lock files, the
// embedding cache: everything), or in a file's name, naming the file. It reports how many
// files it read, so that a test can tell it looked at something.
func AssertNoneInHome(t testing.TB, root string, needles ...string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, n := range needles {
			if n != "" && strings.Contains(string(data), n) {
				t.Errorf("%s holds a secret that must not be there (%.12s…)", rel, n)
			}
			if n != "" && strings.Contains(strings.ToLower(rel), strings.ToLower(n)) {
				t.Errorf("the name of %s holds a secret", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
