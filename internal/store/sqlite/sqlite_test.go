package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/storetest"
	"github.com/hivemem/hivemem/internal/store/vecindex"
)

// openAt opens the palace at path, closed when the test ends (closing it
// before is harmless).
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	return storetest.MustOpen(t, func() (*Store, error) { return Open(t.Context(), path) })
}

// openTemp opens a new palace in a temporary directory.
func openTemp(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "palace", "palace.db"))
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

// TestConformanceParallelScan runs the vector parts of the suite again with
// the parallel scan forced on, so both scan paths are held to it.
func TestConformanceParallelScan(t *testing.T) {
	old := vecindex.ParallelMin
	vecindex.ParallelMin = 16
	t.Cleanup(func() { vecindex.ParallelMin = old })
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestMatchExpr(t *testing.T) {
	tests := []struct {
		in   string
		f    store.Filter
		want string // "" for no query
	}{
		{"", store.Filter{}, ""},
		{"   ", store.Filter{}, ""},
		{`"`, store.Filter{}, ""},
		{"Deploy the ROLLBACK", store.Filter{}, `{heading text} : ("deploy" OR "rollback")`},
		{"the a of", store.Filter{}, `{heading text} : ("the" OR "a" OR "of")`},
		{`NEAR(a b)`, store.Filter{}, `{heading text} : ("near" OR "b")`},
		{`heading:foo ^x *`, store.Filter{}, `{heading text} : ("heading" OR "foo" OR "x")`},
		{`'; DROP TABLE drawers; --`, store.Filter{}, `{heading text} : ("drop" OR "table" OR "drawers")`},
		{"deploy deploy DEPLOY", store.Filter{}, `{heading text} : ("deploy")`},
		{"café naïve", store.Filter{}, `{heading text} : ("café" OR "naïve")`},
		{"e\u0301t\u00e9", store.Filter{}, "{heading text} : (\"e\u0301t\u00e9\")"},
		{"日本語 テキスト", store.Filter{}, `{heading text} : ("日本語" OR "テキスト")`},
		{"a\x00b", store.Filter{}, `{heading text} : ("b")`},
		{"x", store.Filter{Wing: "ada", Since: "2026-01-01"}, `{heading text} : ("x") AND scope : "w616461"`},
		{"x", store.Filter{Wing: `"; x`, Room: "r", Agent: "é"}, `{heading text} : ("x") AND scope : "w223b2078" AND scope : "r72" AND scope : "ac3a9"`},
	}
	for _, tt := range tests {
		if got := matchExpr(store.QueryTerms(tt.in), tt.f); got != tt.want {
			t.Errorf("matchExpr(%q, %+v) = %s, want %s", tt.in, tt.f, got, tt.want)
		}
	}
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, " t%d", i)
	}
	if n := strings.Count(ftsQuery(many.String()), " OR ") + 1; n != store.MaxQueryTerms {
		t.Errorf("ftsQuery kept %d terms, want %d", n, store.MaxQueryTerms)
	}
}

func TestSchemaUsesQueryTokenizer(t *testing.T) {
	if !strings.Contains(migrations[0], "tokenize='"+ftsTokenize+"'") {
		t.Errorf("the schema's FTS5 tokenizer is not ftsTokenize (%q): query term pruning would look up the wrong tokens", ftsTokenize)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path string
	}{
		{"empty", ""},
		{"nul", "a\x00b"},
		{"directory", dir},
	}
	for _, tt := range tests {
		s, err := Open(t.Context(), tt.path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", tt.name)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "we?ird #dir 100%", "palace.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	defer s.Close()
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the path asked: %v", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "palace.db")
	s := openAt(t, path)
	if err := s.SetModel(ctx, "m", 2); err != nil {
		t.Fatal(err)
	}
	d := store.Drawer{ID: "x", Source: "a.md", Text: "persistent words", Vector: []float32{0.6, 0.8}}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md"}, Insert: []store.Drawer{d}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s = openAt(t, path)
	if res, err := s.Lexical(ctx, "persistent", store.Filter{}, 5); err != nil || len(res) != 1 {
		t.Errorf("Lexical after reopen = %v, %v", res, err)
	}
	if res, err := s.Vector(ctx, []float32{0.6, 0.8}, store.Filter{}, 5); err != nil || len(res) != 1 || res[0].Score < 0.9999 {
		t.Errorf("Vector after reopen = %v, %v", res, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "palace.db")
	s := openAt(t, path)
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = Open(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a newer schema")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("error does not say why: %v", err)
	}
}

// rawDB opens the palace file directly, bypassing Store, to damage it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestCheckFindsDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage []string
		want   string
	}{
		{"fts out of step", []string{
			`DROP TRIGGER drawers_fts_au`,
			`UPDATE drawers SET text = 'completely different words'`,
		}, "full-text"},
		{"short vector", []string{`UPDATE drawers SET vector = x'0000803f'`}, "vectors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			s := openTemp(t)
			if err := s.SetModel(ctx, "m", 2); err != nil {
				t.Fatal(err)
			}
			d := store.Drawer{ID: "x", Source: "a.md", Text: "some words here", Vector: []float32{1, 0}}
			if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md"}, Insert: []store.Drawer{d}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx); err != nil {
				t.Fatalf("Check before damage: %v", err)
			}
			db := rawDB(t, s.Path())
			for _, q := range tt.damage {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			err := s.Check(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check after %s = %v, want a %q problem", tt.name, err, tt.want)
			}
		})
	}
}

// TestTwoStoresOneFile hammers one palace from two Store instances (as two
// processes would) and checks that nothing is lost or corrupted and that
// each instance's in-memory vectors notice the other's writes.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "palace.db")
	var stores [2]*Store
	for i := range stores {
		stores[i] = openAt(t, path)
	}
	const dim = 8
	if err := stores[0].SetModel(ctx, "m", dim); err != nil {
		t.Fatal(err)
	}
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for w, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			src := fmt.Sprintf("agent%d.md", w)
			var prev []string
			for r := range rounds {
				u := store.FileUpdate{File: store.File{Source: src, Wing: "w"}, Delete: prev}
				prev = nil
				for i := range 20 {
					d := store.Drawer{ID: fmt.Sprintf("%s#%d.%d", src, r, i), Wing: fmt.Sprintf("w%d", w), Source: src,
						Text: fmt.Sprintf("round %d item %d of writer %d", r, i, w), Vector: storetest.UnitVector(rng, dim)}
					u.Insert = append(u.Insert, d)
					prev = append(prev, d.ID)
				}
				if err := s.Apply(ctx, u); err != nil {
					errs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
					return
				}
				if _, err := s.Vector(ctx, storetest.UnitVector(rng, dim), store.Filter{}, 5); err != nil {
					errs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, s := range stores {
		if err := s.Check(ctx); err != nil {
			t.Errorf("store %d Check: %v", i, err)
		}
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Files != 2 || st.Drawers != 40 || st.Vectors != 40 {
			t.Errorf("store %d Stats = %+v, want 2 files, 40 drawers with vectors", i, st)
		}
		// Each store's in-memory vectors must hold exactly the other's latest round too.
		res, err := s.Vector(ctx, make([]float32, dim), store.Filter{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 40 {
			t.Errorf("store %d Vector sees %d drawers, want 40", i, len(res))
		}
		for _, r := range res {
			if !strings.Contains(r.ID, fmt.Sprintf("#%d.", rounds-1)) {
				t.Errorf("store %d Vector returns stale drawer %s", i, r.ID)
				break
			}
		}
	}
	// A write by one store is seen by the other's next search.
	d := store.Drawer{ID: "late", Source: "late.md", Wing: "late", Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0}}
	if err := stores[0].Apply(ctx, store.FileUpdate{File: store.File{Source: "late.md"}, Insert: []store.Drawer{d}}); err != nil {
		t.Fatal(err)
	}
	res, err := stores[1].Vector(ctx, d.Vector, store.Filter{Wing: "late"}, 5)
	if err != nil || len(res) != 1 || res[0].ID != "late" {
		t.Errorf("other store's Vector after a write = %v, %v", res, err)
	}
}

// TestVectorReloadAfterForeignWrite checks the generation mechanism alone:
// a write to the file that bypasses this Store is noticed.
func TestVectorReloadAfterForeignWrite(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if err := s.SetModel(ctx, "m", 2); err != nil {
		t.Fatal(err)
	}
	d := store.Drawer{ID: "x", Source: "a.md", Vector: []float32{1, 0}}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md"}, Insert: []store.Drawer{d}}); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Vector(ctx, []float32{1, 0}, store.Filter{}, 5); err != nil || len(res) != 1 {
		t.Fatalf("Vector = %v, %v", res, err)
	}
	other, err := Open(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.DeleteFile(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Vector(ctx, []float32{1, 0}, store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Vector after another store deleted everything = %v, %v", res, err)
	}
	g1, _ := s.generation(ctx)
	if err := other.ClearVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if g2, _ := s.generation(ctx); g2 <= g1 {
		t.Errorf("generation did not move: %d -> %d", g1, g2)
	}
}

func TestCanceledContext(t *testing.T) {
	s := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Lexical(ctx, "x", store.Filter{}, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("Lexical with a canceled context = %v", err)
	}
	if err := s.Check(ctx); err == nil {
		t.Errorf("Check with a canceled context succeeded")
	}
}

// TestMigrateFromVersion1 opens a palace written before files had an
// origin or a room: it is upgraded in place, keeps its files (with neither),
// and takes both from then on.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], `PRAGMA user_version = 1`,
		`INSERT INTO files(source, hash, size, mined_at, wing, agent) VALUES ('hive/agents/ada/memory.md', 'h', 1, 0, 'ada', 'ada')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of a version-1 palace: %v", err)
	}
	defer s.Close()
	f, err := s.GetFile(t.Context(), "hive/agents/ada/memory.md")
	if err != nil || f.Wing != "ada" || f.Origin != "" || f.Room != "" {
		t.Fatalf("file after migration = %+v, %v", f, err)
	}
	f.Origin, f.Room = "laptop-1", "roadmap"
	if err := s.Apply(t.Context(), store.FileUpdate{File: f}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.GetFile(t.Context(), f.Source); err != nil || f.Origin != "laptop-1" || f.Room != "roadmap" {
		t.Fatalf("file after Apply = %+v, %v", f, err)
	}
}

// TestReplacedFileIsFollowed: palace.db deleted (or set aside) under an
// open store and built again at the same path by another handle, as
// `hivemem reindex` does while `hivemem run` is up. The open store reads
// and writes the new file from then on — its warm vector and BM25 copies
// included — rather than the deleted one nobody else sees. While the path
// holds no file, it keeps the one it has.
func TestReplacedFileIsFollowed(t *testing.T) {
	for _, how := range []string{"deleted", "set aside"} {
		t.Run(how, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "palace", "palace.db")
			a := openAt(t, path)
			a.WarmLexical()
			if err := a.SetModel(ctx, "m", 2); err != nil {
				t.Fatal(err)
			}
			put := func(s *Store, src, text string, vec []float32) {
				t.Helper()
				d := store.Drawer{ID: src + "#1", Wing: "w", Room: "r", Agent: "a", Source: src, Heading: "h",
					LineStart: 1, LineEnd: 2, Hash: "hash-" + src, Text: text, Vector: vec}
				if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: src, Hash: "f-" + src}, Insert: []store.Drawer{d}}); err != nil {
					t.Fatal(err)
				}
			}
			sources := func(s *Store) []string {
				t.Helper()
				fs, err := s.Files(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, f := range fs {
					out = append(out, f.Source)
				}
				return out
			}
			put(a, "old.md", "oldfilegazelle notes", []float32{1, 0})
			// Warm both in-memory indexes on the old file (the BM25 one
			// builds in the background).
			waitLexWarm(t, a, "oldfilegazelle")
			if got, err := a.Vector(ctx, []float32{1, 0}, store.Filter{}, 5); err != nil || len(got) != 1 {
				t.Fatalf("vector search before: %v %v", got, err)
			}

			switch how {
			case "deleted":
				for _, suf := range []string{"", "-wal", "-shm"} {
					if err := os.Remove(path + suf); err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
				}
				// Nothing at the path yet: the open file stays in use.
				if got := sources(a); len(got) != 1 || got[0] != "old.md" {
					t.Fatalf("files with the path empty: %v, want the open file's", got)
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Fatalf("a read created a new file at the path: %v", err)
				}
			case "set aside":
				if _, err := SetAside(path, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			b := openAt(t, path)
			if err := b.SetModel(ctx, "m", 2); err != nil {
				t.Fatal(err)
			}
			put(b, "new.md", "newfileibex notes", []float32{0, 1})

			if got := sources(a); len(got) != 1 || got[0] != "new.md" {
				t.Errorf("files through the old handle: %v, want the new file's [new.md]", got)
			}
			if got, err := a.Lexical(ctx, "oldfilegazelle", store.Filter{}, 5); err != nil || len(got) != 0 {
				t.Errorf("lexical search for the old file's word: %v %v, want nothing", got, err)
			}
			if got, err := a.Lexical(ctx, "newfileibex", store.Filter{}, 5); err != nil || len(got) != 1 {
				t.Errorf("lexical search for the new file's word: %v %v", got, err)
			}
			if got, err := a.Vector(ctx, []float32{1, 0}, store.Filter{}, 5); err != nil || len(got) != 1 || got[0].ID != "new.md#1" {
				t.Errorf("vector search through the old handle: %v %v, want only new.md#1", got, err)
			}
			// A write through the old handle lands in the new file.
			put(a, "later.md", "laterwritefinch", []float32{1, 1})
			if got := sources(b); len(got) != 2 || got[0] != "later.md" {
				t.Errorf("files in the new file: %v, want [later.md new.md]", got)
			}
			for _, s := range []*Store{a, b} {
				if err := s.Check(ctx); err != nil {
					t.Errorf("Check: %v", err)
				}
			}
		})
	}
}

// waitLexWarm searches until the in-memory BM25 index answers.
func waitLexWarm(t *testing.T, s *Store, word string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, err := s.lexicalWarm(t.Context(), store.QueryTerms(word), store.Filter{}, 5); err != nil {
			t.Fatal(err)
		} else if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the in-memory lexical index was not built within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestModelChangeByAnotherProcess: two processes on one palace file, one
// switching the embedding model under the other.
func TestModelChangeByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	storetest.ModelChangeByAnotherProcess(t, func(t *testing.T) store.Store {
		return openAt(t, path)
	})
}
