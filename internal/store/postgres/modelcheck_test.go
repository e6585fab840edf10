package postgres

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// TestModelChangeByAnotherProcess: two processes on one palace, one
// switching the embedding model under the other (exact mode: pgvector's
// test server serves one connection at a time).
func TestModelChangeByAnotherProcess(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	storetest.ModelChangeByAnotherProcess(t, func(t *testing.T) store.Store {
		return mustOpen(t, Options{DSN: dsn, VectorMode: "exact"})
	})
}

// TestModelChangedPGVector: in pgvector mode too, a search or a write of
// vectors through a handle whose model the palace no longer records fails
// with store.ErrModelChanged. (The other process is played by SQL: PGlite
// serves one connection at a time.)
func TestModelChangedPGVector(t *testing.T) {
	ctx := t.Context()
	s := openSchema(t, pgtest.EnvPGlite, "auto")
	defer s.Close()
	if s.VectorMode() != ModePGVector {
		t.Fatalf("vector mode %q", s.VectorMode())
	}
	if err := s.SetModel(ctx, "m1", 2); err != nil {
		t.Fatal(err)
	}
	d := store.Drawer{ID: "d1", Heading: "h", Text: "alpha", Hash: "x", Vector: []float32{1, 0}}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: []store.Drawer{d}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE palace SET model = 'm2', generation = generation + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Vector(ctx, []float32{1, 0}, store.Filter{}, 5)
	if !errors.Is(err, store.ErrModelChanged) || !strings.Contains(err.Error(), `"m2"`) {
		t.Errorf("Vector: %v, want store.ErrModelChanged naming m2", err)
	}
	if err := s.SetVectors(ctx, []string{"d1"}, [][]float32{{0, 1}}); !errors.Is(err, store.ErrModelChanged) {
		t.Errorf("SetVectors: %v, want store.ErrModelChanged", err)
	}
}

// TestSearchPathOtherSchemasIndexUntouched: with search_path "b,a" and a
// pgvector palace in a, the palace made in b gets its own HNSW index
// without dropping a's (an unqualified DROP INDEX IF EXISTS would find
// a's through the search path).
func TestSearchPathOtherSchemasIndexUntouched(t *testing.T) {
	ctx := t.Context()
	aDSN := pgtest.Schema(t, pgtest.EnvPGlite)
	a := mustOpen(t, Options{DSN: aDSN, VectorMode: "pgvector"})
	if err := a.SetModel(ctx, "m", 4); err != nil {
		t.Fatal(err)
	}
	a.Close()
	bDSN := pgtest.Schema(t, pgtest.EnvPGlite)
	au, _ := url.Parse(aDSN)
	bu, _ := url.Parse(bDSN)
	aName := strings.TrimSuffix(au.Query().Get("search_path"), ",public")
	bName := strings.TrimSuffix(bu.Query().Get("search_path"), ",public")
	q := bu.Query()
	q.Set("search_path", bName+","+aName+",public")
	bu.RawQuery = q.Encode()
	b := mustOpen(t, Options{DSN: bu.String(), VectorMode: "pgvector"})
	if err := b.SetModel(ctx, "m", 8); err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{aName, bName} {
		var ok bool
		if err := b.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, schema+".drawers_embedding_hnsw").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("schema %s has no HNSW index", schema)
		}
	}
}
