package postgres

// Adversarial tests: server outages, statement
// timeouts, hostile filters and queries, wrong-dimension vectors, model
// changes under a searching process, and passwords in error messages.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

// rolePassword is the password of the pg-test.sh role hivemem_pw.
const rolePassword = "right-password"

// TestBadDSNNeverShowsPassword: a DSN that fails to parse must not
// echo its password, in any spelling libpq accepts. key = value with spaces
// around '=' is valid libpq syntax (pgconn parses it), but pgx's redaction
// only knows password=..., and redactErr only handles URLs.
func TestBadDSNNeverShowsPassword(t *testing.T) {
	const secret = "letmein2xyzzy"
	for _, dsn := range []string{
		"host=127.0.0.1 password=" + secret + " port=notaport",
		"host=127.0.0.1 password='" + secret + " two' port=notaport",
		"host=127.0.0.1 password = " + secret + " port=notaport",
		"host=127.0.0.1 password= " + secret + " port=notaport",
		"host=127.0.0.1 password =" + secret + " port=notaport",
		"host=127.0.0.1 password = '" + secret + "' sslmode=bogus",
		"postgres://u:" + secret + "@127.0.0.1:notaport/db",
		"postgres://u:" + secret + "@127.0.0.1/db?sslmode=bogus",
		"postgres://127.0.0.1/db?password=" + secret + "&port=notaport",
		"postgres://u:" + secret + "@127.0.0.1/db?pool_max_conns=0",
		"postgres://u:" + secret + "%zz@127.0.0.1/db",
	} {
		s, err := Open(t.Context(), Options{DSN: dsn})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open with a bad DSN shows the password:\n  dsn:   %s\n  error: %v", dsn, err)
		}
	}
}

// TestSubMillisecondStatementTimeout: a statement timeout below one
// millisecond is sent to the server as statement_timeout=0, which turns
// the limit off altogether instead of making it as strict as asked.
func TestSubMillisecondStatementTimeout(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	for _, d := range []time.Duration{500 * time.Microsecond, time.Nanosecond, 1500 * time.Microsecond} {
		s, err := Open(t.Context(), Options{DSN: dsn, StatementTimeout: d})
		if err != nil {
			// Refusing such a timeout at open is a fine answer too.
			continue
		}
		var got string
		err = s.pool.QueryRow(t.Context(), `SHOW statement_timeout`).Scan(&got)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got == "0" {
			t.Errorf("StatementTimeout %s: the server runs with statement_timeout = 0 (no limit at all)", d)
		}
	}
}

// TestStatementTimeoutDSNWins: statement_timeout in the DSN is kept,
// and a store whose every statement times out says so, naming the setting.
func TestStatementTimeoutDSNWins(t *testing.T) {
	base := pgtest.Schema(t, pgtest.EnvPostgres)
	s := mustOpen(t, Options{DSN: base})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("statement_timeout", "1234")
	u.RawQuery = q.Encode()
	s2 := mustOpen(t, Options{DSN: u.String(), StatementTimeout: time.Hour})
	var got string
	if err := s2.pool.QueryRow(t.Context(), `SHOW statement_timeout`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1234ms" {
		t.Errorf("statement_timeout from the DSN: server has %q, want 1234ms", got)
	}
	// A writer stuck behind another process's open write transaction for
	// longer than the timeout gets the timeout error, not a hang.
	short := mustOpen(t, Options{DSN: base, StatementTimeout: 100 * time.Millisecond})
	tx, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(t.Context(), `UPDATE palace SET generation = generation + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = short.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "palace.statement_timeout") {
		t.Errorf("Apply behind a held palace row: %v, want ErrTimeout naming palace.statement_timeout", err)
	}
}

// flakyProxy stands between the store and the server, so that a test can
// take "the server" down (refusing connections, cutting the open ones) and
// bring it back on the same address without disturbing anyone else using
// the real server.
type flakyProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	p := &flakyProxy{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *flakyProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.ln != ln { // went down meanwhile
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close(); c.Close() }() //nolint:errcheck
			go func() { io.Copy(c, up); up.Close(); c.Close() }() //nolint:errcheck
		}
	}()
}

// down refuses new connections and cuts every open one, as a server that
// stops does.
func (p *flakyProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// up listens again on the same address (a no-op when up).
func (p *flakyProxy) up() {
	p.t.Helper()
	p.mu.Lock()
	isUp := p.ln != nil
	p.mu.Unlock()
	if isUp {
		return
	}
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// proxiedStore opens an exact-mode store of at most maxConns connections
// on a fresh schema (the search path narrowed to it) of the server named by
// env, reached through a flakyProxy, with the DSN parameters kv; the store
// is closed when the test ends.
func proxiedStore(t *testing.T, env string, maxConns int, kv ...string) (*Store, *flakyProxy) {
	t.Helper()
	u, err := url.Parse(pgtest.OnlySchema(t, env))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFlakyProxy(t, u.Host)
	u.Host = proxy.addr
	s := mustOpen(t, Options{DSN: pgtest.WithParams(t, u.String(), env, kv...), MaxConns: maxConns, VectorMode: "exact"})
	return s, proxy
}

// inBackground calls search(g, i), for i = 0, 1, …, on each of n
// goroutines g until stop is called; stop waits for them and returns the
// errors search returned (a goroutine stops at its first).
func inBackground(n int, search func(g, i int) error) (stop func() []error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for g := range n {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if err := search(g, i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	return func() []error {
		close(done)
		wg.Wait()
		return errs
	}
}

func randDrawers(rng *rand.Rand, src string, n, dim int) []store.Drawer {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")
	var out []store.Drawer
	for i := range n {
		var b strings.Builder
		for range 4 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		out = append(out, store.Drawer{
			ID: fmt.Sprintf("%s#%d", src, i), Wing: fmt.Sprintf("w%d", i%3), Room: "recent", Agent: fmt.Sprintf("a%d", i%2),
			Source: src, Heading: "note " + words[i%len(words)], LineStart: i + 1, LineEnd: i + 1,
			Date: fmt.Sprintf("2026-01-%02d", 1+i%28), Hash: fmt.Sprint(i), Text: b.String(), Vector: storetest.UnitVector(rng, dim),
		})
	}
	return out
}

// TestServerRestart takes the server away under an open store (new
// connections refused, open ones cut) and brings it back: while it is down
// every operation fails promptly, with an error that says the server cannot
// be reached and never shows the password, and nothing is half-written;
// once it is back the pool recovers on its own (at most one failed attempt
// per operation, on a connection that died with the server) and every
// result equals the one from before the outage.
func TestServerRestart(t *testing.T) {
	s, proxy := proxiedStore(t, pgtest.EnvPostgresPassword, 4, "connect_timeout", "5")
	ctx := t.Context()
	s.WarmLexical()
	const dim = 8
	if err := s.SetModel(ctx, "m", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	ds := randDrawers(rng, "a.md", 30, dim)
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h1"}, Insert: ds}); err != nil {
		t.Fatal(err)
	}
	qv := storetest.UnitVector(rng, dim)
	if _, err := s.Lexical(ctx, "bravo delta", store.Filter{}, 10); err != nil {
		t.Fatal(err)
	}
	s.WaitLexWarm()
	lex0, err := s.Lexical(ctx, "bravo delta", store.Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	vec0, err := s.Vector(ctx, qv, store.Filter{Wing: "w1"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(lex0) == 0 || len(vec0) == 0 {
		t.Fatalf("no baseline results: %d lexical, %d vector", len(lex0), len(vec0))
	}

	extra := randDrawers(rng, "b.md", 5, dim)
	ops := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"lexical", func(ctx context.Context) error {
			got, err := s.Lexical(ctx, "bravo delta", store.Filter{}, 10)
			if err == nil && !slices.Equal(scoredIDs(got), scoredIDs(lex0)) {
				return fmt.Errorf("lexical results changed: %v, want %v", scoredIDs(got), scoredIDs(lex0))
			}
			return err
		}},
		{"vector", func(ctx context.Context) error {
			got, err := s.Vector(ctx, qv, store.Filter{Wing: "w1"}, 10)
			if err == nil && !slices.Equal(scoredIDs(got), scoredIDs(vec0)) {
				return fmt.Errorf("vector results changed: %v, want %v", scoredIDs(got), scoredIDs(vec0))
			}
			return err
		}},
		{"stats", func(ctx context.Context) error {
			st, err := s.Stats(ctx)
			if err == nil && st.Drawers != len(ds) {
				return fmt.Errorf("stats: %d drawers, want %d", st.Drawers, len(ds))
			}
			return err
		}},
		{"get file", func(ctx context.Context) error { _, err := s.GetFile(ctx, "a.md"); return err }},
		{"lock source", func(ctx context.Context) error {
			unlock, err := s.LockSource(ctx, "a.md")
			if err == nil {
				unlock()
			}
			return err
		}},
	}

	proxy.down()
	for _, op := range ops {
		octx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := op.run(octx)
		cancel()
		switch {
		case err == nil:
			t.Errorf("server down: %s succeeded", op.name)
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("server down: %s hung until its context expired: %v", op.name, err)
		case strings.Contains(err.Error(), rolePassword):
			t.Errorf("server down: %s error shows the password: %v", op.name, err)
		default:
			t.Logf("server down: %s: %v", op.name, err)
		}
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	err = s.Apply(octx, store.FileUpdate{File: store.File{Source: "b.md", Hash: "h"}, Insert: extra})
	cancel()
	if err == nil {
		t.Fatal("server down: Apply succeeded")
	}
	if strings.Contains(err.Error(), rolePassword) {
		t.Errorf("server down: Apply error shows the password: %v", err)
	}

	proxy.up()
	for _, op := range ops {
		var errs []error
		for range 3 {
			octx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err := op.run(octx)
			cancel()
			if err == nil {
				break
			}
			errs = append(errs, err)
		}
		if len(errs) > 1 {
			t.Errorf("server back: %s failed %d times in a row: %v", op.name, len(errs), errors.Join(errs...))
		}
	}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "b.md", Hash: "h"}, Insert: extra}); err != nil {
		// One retry for a connection that died with the server.
		if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "b.md", Hash: "h"}, Insert: extra}); err != nil {
			t.Fatalf("server back: Apply: %v", err)
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check after the outage: %v", err)
	}
	got, err := s.Lexical(ctx, "bravo delta", store.Filter{Wing: "w9"}, 10)
	if err != nil || len(got) != 0 {
		t.Errorf("lexical in an empty wing after the outage: %v, %v", got, err)
	}
	all := map[string]store.Drawer{}
	for _, d := range append(slices.Clone(ds), extra...) {
		all[d.ID] = d
	}
	gotV, err := s.Vector(ctx, qv, store.Filter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	storetest.SameRanking(t, "vector after the outage and a write", gotV, storetest.BruteForce(all, qv, store.Filter{}, 100))
}

// TestServerDownErrorsAreClear: when the server goes away under an
// open store, the error of an operation on a pooled connection that died
// with it should say that the PostgreSQL server is gone, as Open's errors
// do (ErrUnreachable: "cannot reach the PostgreSQL server … is the server
// running"). Today it is pgx's bare "unexpected EOF" (a cut connection;
// "conn closed" after pg_ctl stop -m immediate, "FATAL: terminating
// connection due to administrator command" after -m fast), which tells an
// operator reading `hivemem run`'s log nothing about the database.
func TestServerDownErrorsAreClear(t *testing.T) {
	s, proxy := proxiedStore(t, pgtest.EnvPostgres, 2)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 1))
	if err := s.SetModel(ctx, "m", 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: randDrawers(rng, "a.md", 3, 4)}); err != nil {
		t.Fatal(err)
	}
	qv := storetest.UnitVector(rng, 4)
	ops := map[string]func() error{
		"Lexical": func() error { _, err := s.Lexical(ctx, "alpha", store.Filter{}, 5); return err },
		"Vector":  func() error { _, err := s.Vector(ctx, qv, store.Filter{}, 5); return err },
		"Stats":   func() error { _, err := s.Stats(ctx); return err },
		"Apply":   func() error { return s.Apply(ctx, store.FileUpdate{File: store.File{Source: "b.md", Hash: "h"}}) },
	}
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		proxy.up()
		if err := ops[name](); err != nil { // a live pooled connection
			t.Fatalf("%s before the outage: %v", name, err)
		}
		proxy.down()
		err := ops[name]()
		if err == nil {
			t.Errorf("%s with the server gone succeeded", name)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, ErrUnreachable) && !strings.Contains(msg, "connect") && !strings.Contains(msg, "PostgreSQL") {
			t.Errorf("%s with the server gone: %q does not say the PostgreSQL server cannot be reached", name, msg)
		}
	}
}

func scoredIDs(sc []store.Scored) []string {
	out := make([]string, len(sc))
	for i, s := range sc {
		out[i] = s.ID
	}
	return out
}

// pgSQLitePair opens a PostgreSQL store (exact mode) and a SQLite store with
// the same drawers, for comparing their answers.
func pgSQLitePair(t *testing.T, ds []store.Drawer, dim int) (*Store, store.Store) {
	t.Helper()
	ctx := t.Context()
	pg := openSchema(t, pgtest.EnvPostgres, "exact")
	t.Cleanup(func() { pg.Close() })
	lite, err := sqlite.Open(ctx, t.TempDir()+"/palace.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	bySrc := map[string][]store.Drawer{}
	for _, d := range ds {
		bySrc[d.Source] = append(bySrc[d.Source], d)
	}
	for _, st := range []store.Store{pg, lite} {
		if err := st.SetModel(ctx, "m", dim); err != nil {
			t.Fatal(err)
		}
		for _, src := range slices.Sorted(func(yield func(string) bool) {
			for k := range bySrc {
				if !yield(k) {
					return
				}
			}
		}) {
			f := store.File{Source: src, Hash: "h", Wing: bySrc[src][0].Wing, Agent: bySrc[src][0].Agent, Origin: "o"}
			if err := st.Apply(ctx, store.FileUpdate{File: f, Insert: bySrc[src]}); err != nil {
				t.Fatalf("%s: Apply %s: %v", st.Backend(), src, err)
			}
		}
	}
	return pg, lite
}

// TestHostileFiltersMatchSQLite passes SQL, LIKE and tsquery syntax, quotes,
// backslashes, NUL and invalid UTF-8 through every filter field, the
// query and the file prefix: the PostgreSQL store must answer exactly as
// the SQLite one does (and as Filter.Matches says), never with an error
// for a value SQLite simply finds nothing for.
func TestHostileFiltersMatchSQLite(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(3, 4))
	const dim = 4
	ds := randDrawers(rng, "hive/agents/a/memory.md", 12, dim)
	odd := []string{`o'brien`, `50%_off`, `back\slash`, `semi;colon`, `"dq"`, `x) OR (1=1`}
	for i, w := range odd {
		d := randDrawers(rng, fmt.Sprintf("hive/agents/odd%d/memory.md", i), 1, dim)[0]
		d.Wing, d.Room, d.Agent = w, w, w
		ds = append(ds, d)
	}
	pg, lite := pgSQLitePair(t, ds, dim)
	ref := map[string]store.Drawer{}
	for _, d := range ds {
		ref[d.ID] = d
	}
	hostile := append(slices.Clone(odd),
		`' OR '1'='1`, `w1' --`, `w1'; DROP TABLE drawers; --`, `%`, `_`, `w%`, `\`, `\'`, `$1`, `'); SELECT pg_sleep(5); --`,
		"w1\x00", "\x00", "w\xff1", "\xc3", strings.Repeat("w", 100000), `w1 `, `W1`)
	var fails []string
	check := func(what string, f store.Filter) {
		for _, st := range []store.Store{pg, lite} {
			got, err := st.List(ctx, f, 0)
			if err != nil {
				fails = append(fails, fmt.Sprintf("%s: List %s: %v", st.Backend(), what, shortErr(err)))
				continue
			}
			var want []string
			for _, d := range ds {
				if f.Matches(d) {
					want = append(want, d.ID)
				}
			}
			var ids []string
			for _, d := range got {
				ids = append(ids, d.ID)
			}
			slices.Sort(ids)
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				fails = append(fails, fmt.Sprintf("%s: List %s: %d drawers, want %d", st.Backend(), what, len(ids), len(want)))
			}
			lex, err := st.Lexical(ctx, "alpha bravo charlie", f, 50)
			if err != nil {
				fails = append(fails, fmt.Sprintf("%s: Lexical %s: %v", st.Backend(), what, shortErr(err)))
			} else {
				for _, sc := range lex {
					if !f.Matches(ref[sc.ID]) {
						fails = append(fails, fmt.Sprintf("%s: Lexical %s: drawer %s is out of scope", st.Backend(), what, sc.ID))
					}
				}
			}
			qv := storetest.UnitVector(rng, dim)
			vec, err := st.Vector(ctx, qv, f, 50)
			if err != nil {
				fails = append(fails, fmt.Sprintf("%s: Vector %s: %v", st.Backend(), what, shortErr(err)))
			} else if want := storetest.BruteForce(ref, qv, f, 50); !slices.Equal(scoredIDs(vec), scoredIDs(want)) {
				fails = append(fails, fmt.Sprintf("%s: Vector %s: %v, want %v", st.Backend(), what, scoredIDs(vec), scoredIDs(want)))
			}
		}
	}
	for _, v := range hostile {
		name := fmt.Sprintf("%.40q", v)
		check("wing="+name, store.Filter{Wing: v})
		check("room="+name, store.Filter{Room: v})
		check("agent="+name, store.Filter{Agent: v})
	}
	// Dates: anything but YYYY-MM-DD is refused by both, before any SQL.
	for _, v := range []string{`2026-01-01' OR '1'='1`, `2026-01-01 --`, "2026-01-01\x00", `%`, `2026-13-01`} {
		for _, f := range []store.Filter{{Since: v}, {Until: v}} {
			for _, st := range []store.Store{pg, lite} {
				if _, err := st.Lexical(ctx, "alpha", f, 5); err == nil {
					fails = append(fails, fmt.Sprintf("%s: Lexical with date %q: no error", st.Backend(), v))
				}
				if _, err := st.List(ctx, f, 5); err == nil {
					fails = append(fails, fmt.Sprintf("%s: List with date %q: no error", st.Backend(), v))
				}
			}
		}
	}
	// Queries: every backend reads them as words only.
	for _, q := range []string{`' OR 1=1 --`, `alpha') | ('bravo`, `alpha:* & !bravo`, `alpha <-> bravo`, `\'alpha\'`,
		`alpha'); DROP TABLE drawers; --`, "alpha\x00bravo", "alpha\xffbravo", `"alpha" NEAR "bravo"`, `$1 $2 alpha`} {
		got, err := pg.Lexical(ctx, q, store.Filter{}, 20)
		if err != nil {
			fails = append(fails, fmt.Sprintf("postgres: Lexical(%q): %v", q, shortErr(err)))
			continue
		}
		want, err := lite.Lexical(ctx, q, store.Filter{}, 20)
		if err != nil {
			fails = append(fails, fmt.Sprintf("sqlite: Lexical(%q): %v", q, shortErr(err)))
			continue
		}
		if !slices.Equal(scoredIDs(got), scoredIDs(want)) {
			fails = append(fails, fmt.Sprintf("Lexical(%q): postgres %v, sqlite %v", q, scoredIDs(got), scoredIDs(want)))
		}
	}
	// File prefixes and sources.
	for _, p := range []string{`%`, `_`, `hive/agents/odd%`, `hive/agents/a\`, "hive\x00", "hive/\xff", `' OR '1'='1`} {
		for _, st := range []store.Store{pg, lite} {
			fs, err := st.Files(ctx, p)
			if err != nil {
				fails = append(fails, fmt.Sprintf("%s: Files(%q): %v", st.Backend(), p, shortErr(err)))
			} else if len(fs) != 0 {
				fails = append(fails, fmt.Sprintf("%s: Files(%q): %d files, want none", st.Backend(), p, len(fs)))
			}
			if _, err := st.GetFile(ctx, p); !errors.Is(err, store.ErrNotFound) {
				fails = append(fails, fmt.Sprintf("%s: GetFile(%q): %v, want not found", st.Backend(), p, shortErr(err)))
			}
			if err := st.DeleteFile(ctx, p); err != nil {
				fails = append(fails, fmt.Sprintf("%s: DeleteFile(%q): %v", st.Backend(), p, shortErr(err)))
			}
		}
	}
	for _, st := range []store.Store{pg, lite} {
		if err := st.Check(ctx); err != nil {
			fails = append(fails, fmt.Sprintf("%s: Check: %v", st.Backend(), err))
		}
		if st, err := st.Stats(ctx); err != nil || st.Drawers != len(ds) {
			fails = append(fails, fmt.Sprintf("Stats after the hostile inputs: %d drawers (want %d), %v", st.Drawers, len(ds), err))
		}
	}
	for _, f := range fails {
		t.Error(f)
	}
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// TestHugeQueriesMatchSQLite: very long queries, very long words and absurd k
// are answered as SQLite answers them, never with a server error. (A query
// word of 2047 bytes or more finds nothing on PostgreSQL: a documented
// tsvector limit, so not compared.)
func TestHugeQueriesMatchSQLite(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 4
	ds := randDrawers(rng, "a.md", 40, dim)
	long := strings.Repeat("z", 3000)
	ds[0].Text += " " + long + " " + strings.Repeat("y", 2046)
	pg, lite := pgSQLitePair(t, ds, dim)
	var b strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&b, "w%d ", i)
	}
	queries := []string{
		b.String(),
		strings.Repeat("alpha ", 200000),
		strings.Repeat("y", 2046),
		strings.Repeat("y", 2047),
		strings.Repeat("é", 5000),
		strings.Repeat("日本語", 20000),
		strings.Repeat("a-b.c_d/", 50000) + " bravo",
	}
	for _, q := range queries {
		for _, k := range []int{1, 1000, math.MaxInt32, math.MaxInt} {
			got, err := pg.Lexical(ctx, q, store.Filter{}, k)
			if err != nil {
				t.Errorf("Lexical(%d-byte query %.20q, k=%d): %v", len(q), q, k, shortErr(err))
				continue
			}
			want, err := lite.Lexical(ctx, q, store.Filter{}, k)
			if err != nil {
				t.Errorf("sqlite: Lexical(%d-byte query %.20q, k=%d): %v", len(q), q, k, shortErr(err))
				continue
			}
			if !slices.Equal(scoredIDs(got), scoredIDs(want)) {
				t.Errorf("Lexical(%d-byte query %.20q, k=%d): postgres %d hits %v, sqlite %d hits %v", len(q), q, k, len(got), scoredIDs(got), len(want), scoredIDs(want))
			}
		}
	}
	for _, k := range []int{math.MaxInt32, math.MaxInt} {
		qv := storetest.UnitVector(rng, dim)
		got, err := pg.Vector(ctx, qv, store.Filter{}, k)
		if err != nil || len(got) != len(ds) {
			t.Errorf("Vector k=%d: %d results, %v", k, len(got), err)
		}
		l, err := pg.List(ctx, store.Filter{}, k)
		if err != nil || len(l) != len(ds) {
			t.Errorf("List limit=%d: %d results, %v", k, len(l), err)
		}
		m, err := pg.MissingVectors(ctx, k)
		if err != nil || len(m) != 0 {
			t.Errorf("MissingVectors limit=%d: %d results, %v", k, len(m), err)
		}
	}
}

// TestWrongDimensionRefused: vectors of another dimension are refused
// everywhere (Apply, SetVectors, PutEmbeddings, queries), and a refused
// write leaves nothing behind.
func TestWrongDimensionRefused(t *testing.T) {
	ctx := t.Context()
	for _, env := range []string{pgtest.EnvPostgres, pgtest.EnvPGlite} {
		t.Run(env, func(t *testing.T) {
			s := openSchema(t, env, "auto")
			defer s.Close()
			rng := rand.New(rand.NewPCG(7, 8))
			const dim = 6
			if err := s.SetModel(ctx, "m", dim); err != nil {
				t.Fatal(err)
			}
			good := randDrawers(rng, "a.md", 5, dim)
			if err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: good}); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{0, 1, dim - 1, dim + 1, 2001, 20000} {
				bad := randDrawers(rng, "b.md", 3, dim)
				bad[2].Vector = make([]float32, n)
				if n > 0 {
					bad[2].Vector[0] = 1
				}
				err := s.Apply(ctx, store.FileUpdate{File: store.File{Source: "b.md", Hash: "h"}, Insert: bad})
				if n == 0 {
					// An empty vector means "not embedded yet".
					if err != nil {
						t.Errorf("Apply with an empty vector: %v", err)
					}
					if err := s.DeleteFile(ctx, "b.md"); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), "dimension") {
					t.Errorf("Apply with a %d-d vector: %v, want a dimension error", n, err)
				}
				if err := s.SetVectors(ctx, []string{good[0].ID}, [][]float32{bad[2].Vector}); err == nil {
					t.Errorf("SetVectors with a %d-d vector succeeded", n)
				}
				if err := s.PutEmbeddings(ctx, "m", []string{"x"}, [][]float32{bad[2].Vector}); err == nil {
					t.Errorf("PutEmbeddings for the palace's model with a %d-d vector succeeded", n)
				}
				if _, err := s.Vector(ctx, bad[2].Vector, store.Filter{}, 5); err == nil {
					t.Errorf("Vector with a %d-d query succeeded", n)
				}
			}
			if _, err := s.Vector(ctx, nil, store.Filter{}, 5); err == nil {
				t.Errorf("Vector with an empty query succeeded")
			}
			if _, err := s.GetFile(ctx, "b.md"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a refused Apply left its file record: %v", err)
			}
			if err := s.Check(ctx); err != nil {
				t.Errorf("Check: %v", err)
			}
			st, err := s.Stats(ctx)
			if err != nil || st.Drawers != len(good) || st.Vectors != len(good) {
				t.Errorf("Stats after refused writes: %+v, %v", st, err)
			}
		})
	}
}

// TestModelChangeWhileSearching: one process searches in a loop
// while another clears the vectors, switches the model (and dimension)
// and stores new vectors. The searcher may get a dimension error while its
// queries are of the old model, but never a panic, never a result mixing
// the two models, and with queries of the new model its results equal a
// brute-force ranking.
func TestModelChangeWhileSearching(t *testing.T) {
	w, r := twoProcesses(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(9, 10))
	const oldDim, newDim = 16, 8
	if err := w.SetModel(ctx, "old", oldDim); err != nil {
		t.Fatal(err)
	}
	old := randDrawers(rng, "a.md", 60, oldDim)
	if err := w.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: old}); err != nil {
		t.Fatal(err)
	}
	oldQ := storetest.UnitVector(rng, oldDim)
	newVecs := make([][]float32, len(old))
	ids := make([]string, len(old))
	for i, d := range old {
		newVecs[i], ids[i] = storetest.UnitVector(rng, newDim), d.ID
	}
	newQ := storetest.UnitVector(rng, newDim)
	if _, err := r.Vector(ctx, oldQ, store.Filter{}, 10); err != nil {
		t.Fatal(err)
	}
	stop := inBackground(4, func(g, i int) error {
		q := oldQ
		if (g+i)%2 == 1 {
			q = newQ
		}
		res, err := r.Vector(ctx, q, store.Filter{}, 10)
		if err != nil {
			if strings.Contains(err.Error(), "dimension") {
				return nil
			}
			return err
		}
		for _, sc := range res {
			if math.IsNaN(sc.Score) || sc.Score > 1.0001 || sc.Score < -1.0001 {
				return fmt.Errorf("score %v for %s", sc.Score, sc.ID)
			}
		}
		return nil
	})
	// switchModel clears the vectors, records the model and stores vecs.
	switchModel := func(model string, dim int, vecs [][]float32) {
		t.Helper()
		if err := w.ClearVectors(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.SetModel(ctx, model, dim); err != nil {
			t.Fatal(err)
		}
		if err := w.SetVectors(ctx, ids, vecs); err != nil {
			t.Fatal(err)
		}
	}
	oldVecs := make([][]float32, len(old))
	for i, d := range old {
		oldVecs[i] = d.Vector
	}
	for range 3 {
		switchModel("new", newDim, newVecs)
		switchModel("old", oldDim, oldVecs)
	}
	switchModel("new", newDim, newVecs)
	for _, err := range stop() {
		t.Errorf("search during the model changes: %v", err)
	}
	ref := map[string]store.Drawer{}
	for i, d := range old {
		d.Vector = newVecs[i]
		ref[d.ID] = d
	}
	got, err := r.Vector(ctx, newQ, store.Filter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	storetest.SameRanking(t, "after the model change", got, storetest.BruteForce(ref, newQ, store.Filter{}, 100))
	if _, err := r.Vector(ctx, oldQ, store.Filter{}, 10); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("a query of the old model after the change: %v, want a dimension error", err)
	}
}

// TestSearchPathAdoptsAnotherSchemasPalace: migrate looks for the
// palace with to_regclass('palace'), which searches the whole search path,
// and every query names its tables unqualified. With search_path "b,a"
// (pgtest.Schema's "t_…,public" is this shape: the new schema, then
// public "where extensions live") and a palace already in a, the store
// silently opens a's palace instead of making its own in b: the tables it
// creates, when it creates any, go to b, the first schema. So a test's
// "fresh schema" is not fresh once any palace exists in public (one does
// in hivemem_pw's database after TestOpenErrors), and two teams whose
// search paths share a later schema share one palace.
func TestSearchPathAdoptsAnotherSchemasPalace(t *testing.T) {
	ctx := t.Context()
	aDSN := pgtest.OnlySchema(t, pgtest.EnvPostgres)
	a := mustOpen(t, Options{DSN: aDSN, VectorMode: "exact"})
	rng := rand.New(rand.NewPCG(11, 12))
	if err := a.Apply(ctx, store.FileUpdate{File: store.File{Source: "a.md", Hash: "h"}, Insert: randDrawers(rng, "a.md", 4, 0)}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	bDSN := pgtest.OnlySchema(t, pgtest.EnvPostgres)
	au, _ := url.Parse(aDSN)
	bu, _ := url.Parse(bDSN)
	aName, bName := au.Query().Get("search_path"), bu.Query().Get("search_path")
	q := bu.Query()
	q.Set("search_path", bName+","+aName)
	bu.RawQuery = q.Encode()
	b := mustOpen(t, Options{DSN: bu.String(), VectorMode: "exact"})
	var inB bool
	if err := b.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, bName+".palace").Scan(&inB); err != nil {
		t.Fatal(err)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !inB || st.Drawers != 0 {
		t.Errorf("open with search_path %s,%s: palace created in %s: %v; it shows %d drawers (%s's)", bName, aName, bName, inB, st.Drawers, aName)
	}
}

// TestExactRefreshUnderChurn: two writer processes take turns with
// every kind of write (inserts with and without vectors, deletes, metadata
// updates, whole-file deletes, ClearVectors, SetVectors, Reset) while
// three goroutines of a third process search without pause, its vector
// cache and warm lexical index following along. Every few writes the
// reader's exact results are compared with a brute-force ranking, and its
// warm lexical results with the SQL path of a process without the index.
func TestExactRefreshUnderChurn(t *testing.T) {
	dsn := pgtest.OnlySchema(t, pgtest.EnvPostgres)
	open := func() *Store {
		s := mustOpen(t, Options{DSN: dsn, VectorMode: "exact", MaxConns: 4})
		return s
	}
	w1, w2, r, sqlPath := open(), open(), open(), open()
	r.WarmLexical()
	ctx := t.Context()
	m := newCacheModel(t, w1, r, "m", 8, rand.New(rand.NewPCG(31, 32)))
	queries := make([][]float32, 8)
	for i := range queries {
		queries[i] = m.unit()
	}
	stop := inBackground(3, func(g, i int) error {
		var err error
		if (g+i)%2 == 0 {
			_, err = r.Vector(ctx, queries[i%len(queries)], store.Filter{Wing: fmt.Sprintf("w%d", i%3)}, 5)
		} else {
			_, err = r.Lexical(ctx, "t h", store.Filter{}, 5)
		}
		return err
	})
	lexCheck := func(step string) {
		t.Helper()
		for _, f := range []store.Filter{{}, {Wing: "w1"}, {Agent: "a0", Room: "r1"}} {
			for _, k := range []int{3, 100} {
				got, err := r.Lexical(ctx, "t h", f, k)
				if err != nil {
					t.Fatalf("%s: warm Lexical: %v", step, err)
				}
				want, err := sqlPath.Lexical(ctx, "t h", f, k)
				if err != nil {
					t.Fatalf("%s: SQL Lexical: %v", step, err)
				}
				if !slices.Equal(scoredIDs(got), scoredIDs(want)) {
					t.Fatalf("%s: Lexical %+v k=%d:\n warm %v\n SQL  %v", step, f, k, scoredIDs(got), scoredIDs(want))
				}
			}
		}
	}
	srcs := []string{"f0.md", "f1.md", "f2.md"}
	for step := range 120 {
		if step%2 == 0 {
			m.w = w1
		} else {
			m.w = w2
		}
		src := srcs[m.rng.IntN(len(srcs))]
		ids := m.ids(src)
		what := ""
		switch op := m.rng.IntN(20); {
		case op < 7 || len(ids) == 0:
			what = "insert"
			m.insert(src, 1+m.rng.IntN(5), func(int) bool { return m.rng.IntN(4) == 0 })
		case op < 11:
			what = "delete"
			m.rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			m.apply(store.FileUpdate{File: store.File{Source: src}, Delete: ids[:min(len(ids), 1+m.rng.IntN(3))]})
		case op < 14:
			what = "update"
			var upd []store.Drawer
			for _, id := range ids[:min(len(ids), 1+m.rng.IntN(3))] {
				d := m.ref[id]
				d.Wing, d.Room, d.Agent = fmt.Sprintf("w%d", m.rng.IntN(3)), fmt.Sprintf("r%d", m.rng.IntN(2)), fmt.Sprintf("a%d", m.rng.IntN(2))
				d.Vector = nil
				upd = append(upd, d)
			}
			m.apply(store.FileUpdate{File: store.File{Source: src}, Update: upd})
		case op < 15:
			what = "delete file"
			if err := m.w.DeleteFile(ctx, src); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				delete(m.ref, id)
			}
		case op < 17:
			what = "clear vectors"
			m.clearVectors()
		case op < 19:
			what = "set vectors"
			m.setVectors(m.missing())
		default:
			what = "reset"
			if err := m.w.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			clear(m.ref)
		}
		if step%6 == 5 {
			m.check(fmt.Sprintf("step %d (%s)", step, what), "?")
			lexCheck(fmt.Sprintf("step %d (%s)", step, what))
		}
	}
	for _, err := range stop() {
		t.Errorf("background search: %v", err)
	}
	m.check("end", "?")
	lexCheck("end")
	if err := w1.Check(ctx); err != nil {
		t.Errorf("Check: %v", err)
	}
	full, delta := r.VecRefreshes()
	t.Logf("reader: %d full reloads, %d incremental refreshes", full, delta)
}

// TestNewerSchemaUntouched: a palace from a newer hivemem is refused
// in every vector mode, with the upgrade hint and no password, and left
// exactly as it was (no migration, no generation bump).
func TestNewerSchemaUntouched(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.OnlySchema(t, pgtest.EnvPostgresPassword)
	s := mustOpen(t, Options{DSN: dsn, VectorMode: "exact"})
	if _, err := s.pool.Exec(ctx, `UPDATE palace SET schema_version = $1, generation = 42`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "auto", "exact", "pgvector"} {
		s2, err := Open(ctx, Options{DSN: dsn, VectorMode: mode})
		if err == nil {
			s2.Close()
			t.Errorf("mode %q: a newer schema opened", mode)
			continue
		}
		if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade hivemem") || strings.Contains(err.Error(), rolePassword) {
			t.Errorf("mode %q: %v", mode, err)
		}
	}
	var v int
	var gen int64
	if err := s.pool.QueryRow(ctx, `SELECT schema_version, generation FROM palace`).Scan(&v, &gen); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion+1 || gen != 42 {
		t.Errorf("after the refused opens: schema_version %d, generation %d", v, gen)
	}
	s.Close()
}
