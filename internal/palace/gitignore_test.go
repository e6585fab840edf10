package palace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// TestMineHonoursGitignore: the .gitignore files of a mined tree exclude
// what git would: negation, directory-only patterns, anchoring, "**", a
// deeper file over its parent, and nothing under an excluded directory can
// be taken back.
func TestMineHonoursGitignore(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // path under the agent dir → content ("" = a note)
		want  []string          // mined, relative to the agent dir
	}{
		{name: "harness layout",
			files: map[string]string{
				".gitignore":      "settings.json\ncursor.json\ninbox/\noutbox/\n.codex/\n",
				"memory.md":       "",
				"identity.md":     "",
				"inbox/m1.md":     "",
				"outbox/sent.md":  "",
				"notes/inbox.md":  "", // a file named like an ignored directory stays
				"settings.json":   "{}",
				"outbox/m2.json":  "{}",
				".codex/notes.md": "",
			},
			want: []string{"identity.md", "memory.md", "notes/inbox.md"}},
		{name: "negation and glob",
			files: map[string]string{".gitignore": "*.md\n!memory.md\n", "memory.md": "", "scratch.md": "", "sub/memory.md": "", "sub/x.md": ""},
			want:  []string{"memory.md", "sub/memory.md"}},
		{name: "anchored",
			files: map[string]string{".gitignore": "/draft.md\n", "draft.md": "", "sub/draft.md": "", "memory.md": ""},
			want:  []string{"memory.md", "sub/draft.md"}},
		{name: "double star and comments",
			files: map[string]string{".gitignore": "# private notes\n\n**/private/**\r\n", "memory.md": "", "a/private/x.md": "", "a/b/private/y.md": "", "a/public.md": ""},
			want:  []string{"a/public.md", "memory.md"}},
		{name: "deeper file overrides its parent",
			files: map[string]string{".gitignore": "*.log.md\n", "sub/.gitignore": "!keep.log.md\n", "run.log.md": "", "sub/keep.log.md": "", "sub/other.log.md": "", "memory.md": ""},
			want:  []string{"memory.md", "sub/keep.log.md"}},
		{name: "no re-include under an excluded directory",
			files: map[string]string{".gitignore": "old/\n!old/keep.md\n", "old/keep.md": "", "memory.md": ""},
			want:  []string{"memory.md"}},
		{name: "a sibling's rules stay in its directory",
			files: map[string]string{"a/.gitignore": "x.md\n", "a/x.md": "", "b/x.md": ""},
			want:  []string{"b/x.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			dir := filepath.Join(f.h.AgentsDir(), "alice")
			for p, content := range tc.files {
				if content == "" {
					content = "# Notes\n\n## 2026-11-01 — a note\nSomething worth keeping about " + p + ".\n"
				}
				full := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.p.Mine(context.Background(), dir, palace.MineOptions{Wing: "alice", Agent: "alice"}); err != nil {
				t.Fatal(err)
			}
			if got := minedUnder(t, f, dir); !slices.Equal(got, tc.want) {
				t.Errorf("mined %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMineDropsNewlyIgnoredFiles: a file a .gitignore excludes after it
// was mined loses its drawers, though it is still there.
func TestMineDropsNewlyIgnoredFiles(t *testing.T) {
	f := newFixture(t, nil)
	dir := filepath.Join(f.h.AgentsDir(), "alice")
	f.write("alice", "# Memory\n\n## 2026-11-01 — kept\nThe deploy key rotates monthly.\n")
	scratch := filepath.Join(dir, "scratch.md")
	if err := os.WriteFile(scratch, []byte("## 2026-11-02 — scratch\nTemporary pelican thoughts.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(dir, "inbox", "note.md")
	if err := os.MkdirAll(filepath.Dir(inbox), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, []byte("## 2026-11-03 — message\nA flamingo message.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := func() palace.MineReport {
		rep, err := f.p.Mine(context.Background(), dir, palace.MineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	mine()
	if got := minedUnder(t, f, dir); !slices.Equal(got, []string{"inbox/note.md", "memory.md", "scratch.md"}) {
		t.Fatalf("mined %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("scratch.md\ninbox/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := mine(); rep.FilesRemoved != 2 {
		t.Errorf("FilesRemoved = %d, want 2", rep.FilesRemoved)
	}
	if got := minedUnder(t, f, dir); !slices.Equal(got, []string{"memory.md"}) {
		t.Errorf("mined %v after ignoring scratch.md", got)
	}
	for _, q := range []string{"pelican", "flamingo"} {
		if hits := f.search(q, store.Filter{}); len(hits) != 0 {
			t.Errorf("an ignored file is still found: %+v", hits)
		}
	}
	if _, err := os.Stat(scratch); err != nil {
		t.Errorf("the ignored file itself was touched: %v", err)
	}
}

// minedUnder lists the indexed sources under dir, relative to it, sorted.
func minedUnder(t *testing.T, f *fixture, dir string) []string {
	t.Helper()
	files, err := f.st.Files(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fl := range files {
		rel, err := filepath.Rel(dir, f.h.Abs(fl.Source))
		if err == nil && filepath.IsLocal(rel) {
			got = append(got, filepath.ToSlash(rel))
		}
	}
	slices.Sort(got)
	return got
}
