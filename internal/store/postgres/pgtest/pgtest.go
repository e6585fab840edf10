// Package pgtest gives tests a fresh PostgreSQL schema on the throwaway
// servers scripts/pg-test.sh starts. Without the server's DSN in the
// environment a test is skipped, except under CI=true, where it fails: CI
// must never pass by skipping the PostgreSQL suites.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables scripts/pg-test.sh sets.
const (
	// EnvPostgres is Debian's PostgreSQL, without pgvector.
	EnvPostgres = "HIVEMEM_TEST_POSTGRES_DSN"
	// EnvPostgresPassword is the same server as a role that needs a password.
	EnvPostgresPassword = "HIVEMEM_TEST_POSTGRES_PW_DSN"
	// EnvPGlite is PGlite with pgvector: one connection at a time.
	EnvPGlite = "HIVEMEM_TEST_PGLITE_DSN"
)

// BaseDSN returns the DSN in env, skipping the test when it is unset
// (failing it under CI=true).
func BaseDSN(t testing.TB, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set under CI=true: start the servers with scripts/pg-test.sh (as .ci/run does)", env)
		}
		t.Skipf("%s not set: %s", env, installStep(env))
	}
	return dsn
}

// installStep says, as the README does, what makes the server of env
// available: make test starts the servers itself (scripts/pg-test.sh run)
// once what they need is installed.
func installStep(env string) string {
	if env == EnvPGlite {
		return "run `cd tests/pglite && npm ci`, then `make test` starts PGlite (or `eval \"$(scripts/pg-test.sh start)\"` before go test)"
	}
	return "install Debian's postgresql (`apt-get install postgresql`; make test does it when root), then `make test` starts it (or `eval \"$(scripts/pg-test.sh start)\"` before go test)"
}

var serial atomic.Int64

// Schema creates a new schema on the server named by env and returns a DSN
// whose search_path is that schema (then public, where extensions live);
// the schema is dropped when the test ends. On PGlite the DSN also limits
// the pool to one connection and uses no named prepared statements.
func Schema(t testing.TB, env string) string {
	t.Helper()
	base, name := schema(t, env)
	return WithParams(t, base, env, "search_path", name+",public")
}

// OnlySchema is Schema with the search path narrowed to the new schema
// alone, for tests that must not see a palace in the server's public
// schema (TestOpenErrors makes one in hivemem_pw's).
func OnlySchema(t testing.TB, env string) string {
	t.Helper()
	base, name := schema(t, env)
	return WithParams(t, base, env, "search_path", name)
}

// schema creates a schema, dropped when the test ends, on the server named
// by env, and returns the server's DSN and the schema's name.
func schema(t testing.TB, env string) (base, name string) {
	t.Helper()
	base = BaseDSN(t, env)
	name = fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, serial.Add(1))
	exec(t, base, `CREATE SCHEMA `+name)
	t.Cleanup(func() { exec(t, base, `DROP SCHEMA `+name+` CASCADE`) })
	return base, name
}

// WithParams adds key/value parameters to dsn (a postgres:// URL), plus the
// one-connection pool on PGlite.
func WithParams(t testing.TB, dsn, env string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a postgres:// URL: %v", env, err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	if env == EnvPGlite {
		// One backend for every connection: a named prepared statement
		// would outlive its connection and clash with the next one's.
		q.Set("pool_max_conns", "1")
		q.Set("default_query_exec_mode", "exec")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs statements on dsn's server over a connection of its own.
func Exec(t testing.TB, dsn string, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		exec(t, dsn, s)
	}
}

func exec(t testing.TB, dsn, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, stripPool(dsn))
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", strings.Fields(stmt)[0], err)
	}
}

// stripPool drops pgxpool-only parameters, which pgx.Connect refuses.
func stripPool(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// NewSchema is Schema for callers without a testing.TB (testscript
// setups): it returns the DSN and a function that drops the schema.
func NewSchema(env string) (dsn string, drop func() error, err error) {
	base := os.Getenv(env)
	if base == "" {
		return "", nil, fmt.Errorf("%s not set", env)
	}
	name := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, serial.Add(1))
	run := func(stmt string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, stripPool(base))
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, stmt)
		return err
	}
	if err := run(`CREATE SCHEMA ` + name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name+",public")
	u.RawQuery = q.Encode()
	return u.String(), func() error { return run(`DROP SCHEMA ` + name + ` CASCADE`) }, nil
}
