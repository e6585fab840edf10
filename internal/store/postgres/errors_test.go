package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// redactForms are the DSN spellings FuzzRedact and TestRedactErr put a
// password in: every libpq key=value spelling (spaces around '=' or not,
// quoted or not, even the '=' forgotten) and both URL places.
var redactForms = []func(pw, tail string) string{
	func(pw, tail string) string { return "host=127.0.0.1 password=" + kvPlain(pw) + " " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password = " + kvPlain(pw) + " " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password= " + kvPlain(pw) + " " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password =" + kvPlain(pw) + " " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password " + kvPlain(pw) + " " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password='" + kvQuoted(pw) + "' " + tail },
	func(pw, tail string) string { return "host=127.0.0.1 password\t=\t'" + kvQuoted(pw) + "' " + tail },
	func(pw, tail string) string { return tail + " sslpassword = '" + kvQuoted(pw) + "'" },
	func(pw, tail string) string {
		return "postgres://" + url.UserPassword("u", pw).String() + "@127.0.0.1/db?" + tail
	},
	func(pw, tail string) string {
		return "postgresql://127.0.0.1/db?password=" + url.QueryEscape(pw) + "&" + tail
	},
	func(pw, tail string) string {
		return "postgres://127.0.0.1/db?" + tail + "&pass%77ord=" + url.QueryEscape(pw)
	},
}

// kvPlain writes s as an unquoted libpq value: a backslash escapes any
// byte, so spaces, quotes and backslashes too.
func kvPlain(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if c := s[i]; c == '\\' || c == '\'' || isSpace(c) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// kvQuoted writes s for inside single quotes: \' and \\.
func kvQuoted(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

// parseErrors are errors Open could get for dsn: pgx's own, if it fails
// to parse, and errors quoting the DSN raw (the worst case).
func parseErrors(dsn string) []error {
	errs := []error{errors.New(dsn), fmt.Errorf("parsing %q: bad", dsn)}
	if _, err := pgxpool.ParseConfig(dsn); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// TestRedactErr: in every DSN spelling, with tails that make it fail to
// parse, the password never shows, while the error still says what is
// wrong.
func TestRedactErr(t *testing.T) {
	for _, pw := range []string{"letmein2secret", "two words", `quo'te and back\slash`, "p@ss/w?rd&x=y#z", "%zz-bad-escape", "ünïcødé-pässwörd"} {
		for i, form := range redactForms {
			for _, tail := range []string{"port=notaport", "sslmode=bogus", "pool_max_conns=0", "connect_timeout=x"} {
				dsn := form(pw, tail)
				for _, err := range parseErrors(dsn) {
					got := redactErr(err, dsn).Error()
					if strings.Contains(got, pw) {
						t.Errorf("form %d: %q\n  shows the password: %s", i, dsn, got)
					}
				}
			}
		}
	}
	dsn := "host=127.0.0.1 password = letmein2secret port=notaport"
	_, err := pgxpool.ParseConfig(dsn)
	// The DSN is still quoted, masked, and the problem still named.
	if got := redactErr(err, dsn).Error(); !strings.Contains(got, "`host=127.0.0.1 password = xxxxx port=notaport`") || !strings.Contains(got, "invalid port") {
		t.Errorf("redacted: %s", got)
	}
}

// FuzzRedact: for any password in any DSN spelling, whatever follows it,
// the redacted parse error never contains the password (unless the same
// error for another password does: then it is other text that happens to
// read the same).
func FuzzRedact(f *testing.F) {
	for i := range redactForms {
		f.Add("letmein2secret", uint8(i), "port=notaport")
		f.Add("with ' quote \\ and space", uint8(i), "sslmode=bogus")
		f.Add("p@ss:w/o?r#d&%41", uint8(i), "pool_max_conns=x")
	}
	f.Fuzz(func(t *testing.T, pw string, form uint8, tail string) {
		if len(pw) < 6 {
			return // short ones are in the fixed text anyway ("host", "port")
		}
		build := redactForms[int(form)%len(redactForms)]
		const other = "zq8-other-pw"
		if strings.Contains(other, pw) {
			return
		}
		dsn, otherDSN := build(pw, tail), build(other, tail)
		errs, otherErrs := parseErrors(dsn), parseErrors(otherDSN)
		for i, err := range errs {
			got := redactErr(err, dsn).Error()
			if !strings.Contains(got, pw) {
				continue
			}
			if i < len(otherErrs) && strings.Contains(redactErr(otherErrs[i], otherDSN).Error(), pw) {
				continue
			}
			t.Errorf("%q\n  error %q\n  redacted %q", dsn, err, got)
		}
	})
}

// TestConnLost: errors of a server that went away read as ErrUnreachable;
// cancellations and SQL errors do not.
func TestConnLost(t *testing.T) {
	s := &Store{target: "u@h:5432/db"}
	for _, err := range []error{
		io.ErrUnexpectedEOF,
		fmt.Errorf("x: %w", pgconn.ErrConnClosed),
		&pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "08006"},
	} {
		if got := s.wrap(err); !errors.Is(got, ErrUnreachable) || !errors.Is(got, err) || !strings.Contains(got.Error(), s.target) {
			t.Errorf("wrap(%v) = %v, want ErrUnreachable naming %s and wrapping the original", err, got, s.target)
		}
	}
	for _, err := range []error{
		fmt.Errorf("%w: %w", context.Canceled, io.ErrUnexpectedEOF),
		&pgconn.PgError{Code: "23505"},
		errors.New("something else"),
	} {
		if got := s.wrap(err); errors.Is(got, ErrUnreachable) {
			t.Errorf("wrap(%v) = %v, want it left alone", err, got)
		}
	}
}
