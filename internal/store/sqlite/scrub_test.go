package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
)

// After a drawer is deleted and the palace scrubbed, no byte of its text is
// left in the database file or beside it (write-ahead log, shared memory).
func TestScrubLeavesNoByteOfDeletedText(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secret := "sk-live-7f3a9c1e5b2d4a6f8e0c"
	u := store.FileUpdate{File: store.File{Source: "a.md", Hash: "h", Wing: "w", Agent: "a"}, Insert: []store.Drawer{
		{ID: "kept", Source: "a.md", Wing: "w", Room: "recent", Agent: "a", Heading: "kept", Hash: "hk", Text: "ordinary note", LineStart: 1, LineEnd: 2},
		{ID: "secret", Source: "a.md", Wing: "w", Room: "recent", Agent: "a", Heading: "key " + secret, Hash: "hs", Text: "the key is " + secret, LineStart: 3, LineEnd: 4},
	}}
	if err := s.Apply(ctx, u); err != nil {
		t.Fatal(err)
	}
	scan := func() []string {
		var found []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret)) {
				found = append(found, filepath.Base(p))
			}
			return nil
		})
		return found
	}
	if len(scan()) == 0 {
		t.Fatal("the secret is in no file before the delete: the scan sees nothing")
	}
	u2 := store.FileUpdate{File: u.File, Delete: []string{"secret"}}
	if err := s.Apply(ctx, u2); err != nil {
		t.Fatal(err)
	}
	if len(scan()) == 0 {
		t.Fatal("the delete alone left nothing behind: the test cannot show what Scrub does")
	}
	if err := s.Scrub(ctx, []string{"hs"}); err != nil {
		t.Fatal(err)
	}
	if found := scan(); len(found) > 0 {
		t.Errorf("after Scrub the secret is still in %v", found)
	}
	if ds, err := s.Get(ctx, []string{"kept"}); err != nil || len(ds) != 1 {
		t.Errorf("the kept drawer: %v, %v", ds, err)
	}
}
