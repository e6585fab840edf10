package postgres

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
)

// TestUnstorableTextRefused: text PostgreSQL cannot store (invalid UTF-8,
// NUL) in a write is refused with an error saying so, before any SQL,
// not with the server's SQLSTATE 22021. (Reads with such values find
// nothing, as on SQLite: TestHostileFiltersMatchSQLite.)
func TestUnstorableTextRefused(t *testing.T) {
	ctx := t.Context()
	s := openSchema(t, pgtest.EnvPostgres, "exact")
	defer s.Close()
	ok := store.Drawer{ID: "d1", Wing: "w", Room: "r", Heading: "h", Text: "text", Hash: "x"}
	with := func(f func(d *store.Drawer)) []store.Drawer {
		d := ok
		f(&d)
		return []store.Drawer{d}
	}
	for name, u := range map[string]store.FileUpdate{
		"source":  {File: store.File{Source: "notes-\xe9.md", Hash: "h"}},
		"wing":    {File: store.File{Source: "a.md", Hash: "h", Wing: "w\x00"}},
		"drawer":  {File: store.File{Source: "a.md", Hash: "h"}, Insert: with(func(d *store.Drawer) { d.Room = "r\xff" })},
		"text":    {File: store.File{Source: "a.md", Hash: "h"}, Insert: with(func(d *store.Drawer) { d.Text = "a\x00b" })},
		"heading": {File: store.File{Source: "a.md", Hash: "h"}, Insert: with(func(d *store.Drawer) { d.Heading = "\xc3" })},
	} {
		err := s.Apply(ctx, u)
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8 text without NUL bytes") || strings.Contains(err.Error(), "SQLSTATE") {
			t.Errorf("%s: Apply: %v, want a clear refusal", name, err)
		}
	}
	// Deleting an id no drawer can have is nothing to do.
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: []store.Drawer{ok}, Delete: []string{"x\x00"}}); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Get(ctx, []string{"d1", "d\xff"}); err != nil || len(ds) != 1 {
		t.Errorf("Get with an unstorable id: %d drawers, %v", len(ds), err)
	}
}
