package postgres

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// mustOpen opens a store with opts, closed when the test ends (closing it
// before is harmless).
func mustOpen(t *testing.T, opts Options) *Store {
	t.Helper()
	return storetest.MustOpen(t, func() (*Store, error) { return Open(t.Context(), opts) })
}

func openSchema(t *testing.T, env, mode string) *Store {
	t.Helper()
	dsn := pgtest.Schema(t, env)
	s := mustOpen(t, Options{DSN: dsn, VectorMode: mode})
	return s
}

// TestConformance runs the store suite on Debian's PostgreSQL (no
// pgvector: exact vectors scored by hivemem) and on PGlite with pgvector
// (HNSW index, <=> in SQL), each in the vector mode "auto" picks there.
func TestConformance(t *testing.T) {
	for _, c := range []struct{ name, env, mode string }{
		{"exact", pgtest.EnvPostgres, ModeExact},
		{"pgvector", pgtest.EnvPGlite, ModePGVector},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				s := openSchema(t, c.env, "auto")
				if s.VectorMode() != c.mode {
					t.Fatalf("vector mode on %s = %q, want %q", c.env, s.VectorMode(), c.mode)
				}
				return s
			})
		})
	}
}

// TestOpenErrors checks the errors an operator sees for a server that is
// not there, a wrong password, a missing database and a palace written by
// a newer hivemem, on the real server: each names the problem, and none
// shows the password.
func TestOpenErrors(t *testing.T) {
	pw := pgtest.BaseDSN(t, pgtest.EnvPostgresPassword)
	u, err := url.Parse(pw)
	if err != nil {
		t.Fatal(err)
	}
	wrongPW := *u
	wrongPW.User = url.UserPassword(u.User.Username(), "wrong-secret-pw")
	noDB := *u
	noDB.Path = "/no_such_database"
	// A closed port: listen, note the port, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := *u
	closed.Host = l.Addr().String()
	l.Close()

	newer := openSchema(t, pgtest.EnvPostgres, "auto")
	newerDSN := pgtest.Schema(t, pgtest.EnvPostgres)
	s := mustOpen(t, Options{DSN: newerDSN})
	if _, err := s.pool.Exec(t.Context(), `UPDATE palace SET schema_version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	newer.Close()

	tests := []struct {
		name string
		dsn  string
		want error
		text string
	}{
		{"unreachable", closed.String(), ErrUnreachable, "connection refused"},
		{"wrong password", wrongPW.String(), ErrAuth, "password"},
		{"missing database", noDB.String(), ErrNoDatabase, "no_such_database"},
		{"newer schema", newerDSN, ErrSchemaTooNew, "schema version 99"},
		{"bad dsn", "postgres://user:secret-in-dsn@host:notaport/db", nil, "bad DSN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.Context(), Options{DSN: tt.dsn})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %q is not %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not mention %q", err, tt.text)
			}
			for _, secret := range []string{"wrong-secret-pw", "right-password", "secret-in-dsn"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error shows the password: %q", err)
				}
			}
		})
	}
	// The right password works, and migrating again is a no-op.
	for range 2 {
		s, err := Open(t.Context(), Options{DSN: pw})
		if err != nil {
			t.Fatalf("Open with the right password: %v", err)
		}
		if from, to := s.Migrated(); from != to && from != 0 {
			t.Errorf("Migrated() = %d, %d", from, to)
		}
		s.Close()
	}
}

// TestOpenRejectsBadEfSearch: an hnsw.ef_search pgvector would refuse is an
// error at open, before any connection, not a failure at the first search.
func TestOpenRejectsBadEfSearch(t *testing.T) {
	for _, ef := range []int{-1, 1001} {
		s, err := Open(t.Context(), Options{DSN: "postgres://nobody@127.0.0.1:1/none", EfSearch: ef})
		if err == nil {
			s.Close()
			t.Fatalf("Open with EfSearch %d succeeded", ef)
		}
		if !strings.Contains(err.Error(), "ef_search") {
			t.Errorf("EfSearch %d: error %q does not name ef_search", ef, err)
		}
	}
}

// TestStatementTimeout: a statement that runs past palace.statement_timeout
// is cut off by the server with an error that says so.
func TestStatementTimeout(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	// Migrate first, without the short limit: on a loaded machine creating
	// the schema can itself take longer than the limit under test.
	mustOpen(t, Options{DSN: dsn}).Close()
	s := mustOpen(t, Options{DSN: dsn, StatementTimeout: 250 * time.Millisecond})
	_, err := s.pool.Exec(t.Context(), `SELECT pg_sleep(3)`)
	if err = s.wrap(err); !errors.Is(err, ErrTimeout) {
		t.Errorf("pg_sleep(3) under a 250 ms timeout: %v", err)
	}
}

// TestMigrateFromVersion1 opens a palace written before files had a room:
// it is upgraded in place, keeps its files (with no room), and records
// rooms from then on.
func TestMigrateFromVersion1(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	pgtest.Exec(t, dsn, migrations[0],
		`INSERT INTO palace(id, schema_version, generation, model, dim, vector_mode, drawers, tokens) VALUES (1, 1, 0, '', 0, 'exact', 0, 0)`,
		`INSERT INTO files(source, hash, size, mined_at, wing, agent, origin) VALUES ('hive/agents/ada/memory.md', 'h', 1, NULL, 'ada', 'ada', '')`)
	s, err := Open(t.Context(), Options{DSN: dsn})
	if err != nil {
		t.Fatalf("Open of a version-1 palace: %v", err)
	}
	defer s.Close()
	if from, to := s.Migrated(); from != 1 || to != SchemaVersion {
		t.Errorf("Migrated() = %d, %d; want 1, %d", from, to, SchemaVersion)
	}
	f, err := s.GetFile(t.Context(), "hive/agents/ada/memory.md")
	if err != nil || f.Wing != "ada" || f.Room != "" {
		t.Fatalf("file after migration = %+v, %v", f, err)
	}
	f.Room = "roadmap"
	if err := s.Apply(t.Context(), store.FileUpdate{File: f}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.GetFile(t.Context(), f.Source); err != nil || f.Room != "roadmap" {
		t.Fatalf("file after Apply = %+v, %v", f, err)
	}
}
