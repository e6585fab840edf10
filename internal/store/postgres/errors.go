package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Errors an operator can act on, wrapped with the server's name (never the
// password) by Open.
var (
	ErrUnreachable   = errors.New("cannot reach the PostgreSQL server")
	ErrAuth          = errors.New("PostgreSQL refused the credentials")
	ErrNoDatabase    = errors.New("the database does not exist")
	ErrTimeout       = errors.New("statement timed out on the PostgreSQL server")
	ErrNoPermissions = errors.New("PostgreSQL denied the permission")
)

// connectError turns a failure to connect into one of the errors above,
// saying what to check.
func connectError(target string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return fmt.Errorf("open postgres palace %s: %w (%s): check the user and password in palace.dsn / HIVEMEM_DSN", target, ErrAuth, pgErr.Message)
		case "3D000":
			return fmt.Errorf("open postgres palace %s: %w (%s): create it (createdb) or fix the database name in palace.dsn / HIVEMEM_DSN", target, ErrNoDatabase, pgErr.Message)
		}
		return fmt.Errorf("open postgres palace %s: %w", target, err)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("open postgres palace %s: %w", target, err)
	}
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connect") {
		return fmt.Errorf("open postgres palace %s: %w: %s (is the server running and the host and port in palace.dsn / HIVEMEM_DSN right?)", target, ErrUnreachable, rootCause(err))
	}
	return fmt.Errorf("open postgres palace %s: %w", target, err)
}

// rootCause is the innermost error's message (pgconn's outer ones repeat
// the connection parameters).
func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// wrap marks a statement timeout and a permission failure so that they read
// clearly; other errors pass through.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57014":
			if strings.Contains(pgErr.Message, "statement timeout") {
				return fmt.Errorf("%w (raise palace.statement_timeout): %w", ErrTimeout, err)
			}
		case "42501":
			return fmt.Errorf("%w on %s: %w", ErrNoPermissions, s.target, err)
		}
	}
	return err
}

// redactErr removes the password of dsn from a parse error's text.
func redactErr(err error, dsn string) error {
	msg := err.Error()
	if cfg, perr := pgconn.ParseConfig(dsn); perr == nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	} else if i := strings.Index(dsn, "://"); i >= 0 {
		if j := strings.LastIndex(dsn, "@"); j > i {
			if k := strings.Index(dsn[i+3:j], ":"); k >= 0 {
				msg = strings.ReplaceAll(msg, dsn[i+3+k+1:j], "xxxxx")
			}
		}
	}
	return errors.New(msg)
}
