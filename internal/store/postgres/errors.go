package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
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

// wrap marks a statement timeout, a permission failure and a lost server
// so that they read clearly; other errors pass through.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrNoPermissions) || errors.Is(err, ErrUnreachable) {
		return err // nil, or wrapped already
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
		case "22021":
			// Should not happen: text the server cannot store is refused
			// (writes) or matches nothing (reads) before any SQL.
			return fmt.Errorf("PostgreSQL stores only valid UTF-8 text without NUL bytes: %w", err)
		}
	}
	if connLost(err) {
		return fmt.Errorf("%w %s (the connection was lost: is the server running?): %w", ErrUnreachable, s.target, err)
	}
	return err
}

// connLost reports an error that means the server went away under an open
// connection, or could not be connected to again: pgx says only "unexpected
// EOF", "conn closed" or the server's last words.
func connLost(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // our own doing, not the server's
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08 is connection exceptions; 57P01-57P03 are the server
		// shutting down (pg_ctl stop -m fast, a crash) or starting up.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connErr *pgconn.ConnectError
	var netErr *net.OpError
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &connErr) || errors.As(err, &netErr)
}

// redactErr returns a DSN parse error without dsn's passwords: pgconn
// quotes the DSN in its error, masking only the spellings it recognises
// (password=... but not password = ...), and its inner errors can quote
// values too. The DSN is quoted with every password value masked
// (dsnSecrets), and every spelling of those values is masked in the rest.
func redactErr(err error, dsn string) error {
	spans := dsnSecrets(dsn)
	msg := err.Error()
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) && error(pce) == err {
		c := *pce
		c.ConnString = mask(dsn, spans)
		msg = c.Error()
	}
	var secrets []string
	for _, sp := range spans {
		secrets = append(secrets, spellings(dsn[sp[0]:sp[1]])...)
	}
	return errors.New(maskAll(msg, secrets))
}

// dsnSecrets finds the byte ranges of dsn that hold a password, generously:
// a value that might be a password is masked too.
//
//   - key=value DSNs (libpq syntax): the value after every "password"
//     (sslpassword too; any case), with optional spaces around '=' (or a
//     forgotten '='), single-quoted (with \' and \\ escapes) or up to
//     the next space. It is looked for anywhere, not only where a key
//     starts, so that a malformed DSN whose password a parser reads as
//     another key's value is still covered.
//   - URLs (postgres:// or postgresql://): the userinfo password (after
//     the first ':', up to the first or the last '@': a password with an
//     unescaped '/', '?' or '@' still counts) and the value of every
//     query (or fragment) parameter whose decoded name contains
//     "password".
func dsnSecrets(dsn string) [][2]int {
	var spans [][2]int
	rest, isURL := strings.CutPrefix(dsn, "postgres://")
	if !isURL {
		rest, isURL = strings.CutPrefix(dsn, "postgresql://")
	}
	lower := asciiLower(dsn) // byte for byte, unlike strings.ToLower
	for i := 0; ; {
		j := strings.Index(lower[i:], "password")
		if j < 0 {
			break
		}
		start := i + j
		i = start + len("password")
		k := skipSpace(dsn, i)
		switch {
		case k < len(dsn) && dsn[k] == '=':
			k = skipSpace(dsn, k+1)
		case k > i && (start == 0 || isSpace(dsn[start-1])):
			// "password letmein2": no '=' (a parse error), but meant.
		default:
			continue
		}
		if sp, ok := kvValue(dsn, k, isURL); ok {
			spans = append(spans, sp)
		}
	}
	if !isURL {
		return spans
	}
	off := len(dsn) - len(rest)
	if colon := strings.IndexByte(rest, ':'); colon >= 0 {
		// The userinfo ends at the first '@' for pgconn, at the last for
		// a password with an unescaped '@'.
		for _, at := range []int{strings.IndexByte(rest, '@'), strings.LastIndexByte(rest, '@')} {
			if at > colon+1 {
				spans = append(spans, [2]int{off + colon + 1, off + at})
			}
		}
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		// The fragment too: a password there is not used, but was meant.
		pos := off + q + 1
		for pair := range strings.FieldsFuncSeq(rest[q+1:], func(r rune) bool { return r == '&' || r == '#' }) {
			pos += strings.Index(dsn[pos:], pair)
			key, val, ok := strings.Cut(pair, "=")
			name, err := url.QueryUnescape(key)
			if err != nil {
				name = key
			}
			if ok && val != "" && strings.Contains(asciiLower(name), "password") {
				start := pos + len(key) + 1
				spans = append(spans, [2]int{start, start + len(val)})
			}
			pos += len(pair)
		}
	}
	return spans
}

// kvValue is the range of the value starting at i: inside the quotes of a
// quoted one (to the end of dsn if unclosed), else up to a space (or, in a
// URL, '&' or '#'); a backslash escapes the next byte in both.
func kvValue(dsn string, i int, isURL bool) ([2]int, bool) {
	if i >= len(dsn) {
		return [2]int{}, false
	}
	quoted := dsn[i] == '\''
	if quoted {
		i++
	}
	j := i
	for ; j < len(dsn); j++ {
		c := dsn[j]
		if c == '\\' {
			j++
			continue
		}
		if quoted && c == '\'' || !quoted && (isSpace(c) || isURL && (c == '&' || c == '#')) {
			break
		}
	}
	j = min(j, len(dsn))
	return [2]int{i, j}, j > i
}

// spellings are the ways a password written raw in a DSN may show in an
// error: raw, with libpq's backslash escapes or URL escapes undone, and
// each of those quoted as %q quotes (strconv errors, url.Error).
func spellings(raw string) []string {
	forms := []string{raw, unescapeKV(raw)}
	if s, err := url.PathUnescape(raw); err == nil {
		forms = append(forms, s)
	}
	if s, err := url.QueryUnescape(raw); err == nil {
		forms = append(forms, s)
	}
	for _, f := range forms[:len(forms):len(forms)] {
		q := strconv.Quote(f)
		forms = append(forms, q[1:len(q)-1])
	}
	return forms
}

// unescapeKV undoes libpq's backslash escapes.
func unescapeKV(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mask replaces the ranges of s with xxxxx.
func mask(s string, spans [][2]int) string {
	cover := make([]bool, len(s))
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			cover[i] = true
		}
	}
	return maskCovered(s, cover)
}

// maskAll replaces every occurrence of every secret in s with xxxxx (a run
// of overlapping or adjacent occurrences with one xxxxx).
func maskAll(s string, secrets []string) string {
	cover := make([]bool, len(s))
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		for i := 0; ; i++ {
			j := strings.Index(s[i:], sec)
			if j < 0 {
				break
			}
			i += j
			for k := i; k < i+len(sec); k++ {
				cover[k] = true
			}
		}
	}
	return maskCovered(s, cover)
}

func maskCovered(s string, cover []bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if !cover[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString("xxxxx")
		for i < len(s) && cover[i] {
			i++
		}
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
