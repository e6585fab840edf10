package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"sync"
)

// The index is disposable: a user may delete palace.db (with its -wal and
// -shm) while a long-running process has it open, and `hivemem reindex`
// builds a new one at the same path; `reindex` also sets a damaged file
// aside. Connections opened before keep the old file, deleted or moved, and
// a process that held on to them would write where nobody reads. So every
// connection remembers the file it opened, and one whose file is no longer
// the one at the path is discarded before its next use (database/sql then
// opens a new one, on the new file); the in-memory vectors and BM25 index
// are dropped then too. While the path holds no file at all (deleted, not
// rebuilt yet), the open file is kept: opening would create an empty
// palace in place of the one being rebuilt.

// fileConnector opens connections to the palace at s.path, each tagged
// with the file it opened.
type fileConnector struct {
	s   *Store
	dsn string
	drv driver.Driver
}

// newFileDB opens a pool whose connections follow the file at s.path.
func newFileDB(s *Store, dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	if err := probe.Close(); err != nil {
		return nil, err
	}
	return sql.OpenDB(&fileConnector{s: s, dsn: dsn, drv: drv}), nil
}

func (c *fileConnector) Driver() driver.Driver { return c.drv }

func (c *fileConnector) Connect(ctx context.Context) (driver.Conn, error) {
	for range 3 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before, berr := os.Stat(c.s.path)
		inner, err := c.drv.Open(c.dsn)
		if err != nil {
			return nil, err
		}
		after, aerr := os.Stat(c.s.path)
		if aerr == nil && (berr != nil || os.SameFile(before, after)) {
			return &fileConn{Conn: inner, s: c.s, file: after}, nil
		}
		inner.Close() // replaced while it was being opened: open the new one
	}
	return nil, fmt.Errorf("open %s: the file keeps being replaced", c.s.path)
}

// fileConn is a connection to the palace file it opened.
type fileConn struct {
	driver.Conn
	s    *Store
	file os.FileInfo
}

// current reports whether the file at the path is still the connection's
// (or the path holds none: nothing to move to yet).
func (c *fileConn) current() bool {
	st, err := os.Stat(c.s.path)
	return err != nil || os.SameFile(st, c.file)
}

func (c *fileConn) ResetSession(ctx context.Context) error {
	if !c.current() {
		return driver.ErrBadConn
	}
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *fileConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok && !v.IsValid() {
		return false
	}
	return c.current()
}

func (c *fileConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("sqlite driver without BeginTx")
}

func (c *fileConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *fileConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *fileConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *fileConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// fileWatch is which palace file the in-memory indexes were built from.
type fileWatch struct {
	mu   sync.Mutex
	file os.FileInfo
}

// followFile drops the in-memory indexes (and Lexical's cached term
// statistics) when the file at the path is no
// longer the one they were read from, so that the next search reloads them
// from the new file (its generation may well be lower than theirs). It is
// called before searches and writes, with no index lock held.
func (s *Store) followFile() {
	st, err := os.Stat(s.path)
	if err != nil {
		return
	}
	s.fw.mu.Lock()
	changed := s.fw.file != nil && !os.SameFile(s.fw.file, st)
	s.fw.file = st
	s.fw.mu.Unlock()
	if changed {
		s.vec.invalidate()
		s.lexi.Mu.Lock()
		s.lexi.Data = nil
		s.lexi.Mu.Unlock()
		s.lex.mu.Lock()
		s.lex.valid = false
		s.lex.mu.Unlock()
	}
}
