// Package tomledit sets keys in one table of a TOML document and leaves
// every other byte alone: comments, blank lines, key order, quoting, line
// endings and the other tables are kept as written. It is how the
// dashboard saves settings into a config.toml that people also edit by
// hand.
//
// The editor works on lines. It does not understand every layout TOML
// allows (keys set with dotted names, inline tables), so Set parses its
// result and refuses an edit that does not parse, changes anything outside
// the table, or does not hold the new values: given a document that
// parses, it returns one that parses, or an error.
package tomledit

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Setting is one key to set, with its value written as TOML: 4, true,
// "1h".
type Setting struct {
	Key, Value string
}

// ParseError is returned by Set for a document that does not parse: there
// is nothing to edit safely.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// Set returns doc with sets written into [table]: a key already there has
// its value replaced in place (a comment after it is kept), a new key is
// added after the table's last key, and a missing table is appended at the
// end. A later setting of the same key wins. The error is a *ParseError
// when doc does not parse; any other error means the edit was refused and
// doc should be edited by hand.
func Set(doc []byte, table string, sets []Setting) ([]byte, error) {
	var oldDoc map[string]any
	if _, err := toml.Decode(string(doc), &oldDoc); err != nil {
		return nil, &ParseError{Err: err}
	}
	if !bareKey(table) {
		return nil, fmt.Errorf("table name %q: want a bare key (letters, digits, _ and -)", table)
	}
	if len(sets) == 0 {
		return nil, errors.New("nothing to set")
	}
	want := map[string]any{}
	for _, s := range sets {
		if !bareKey(s.Key) {
			return nil, fmt.Errorf("key %q: want a bare key (letters, digits, _ and -)", s.Key)
		}
		var one map[string]any
		if strings.ContainsAny(s.Value, "\r\n") {
			return nil, fmt.Errorf("value of %s: want one line", s.Key)
		}
		// A comment in the value would be kept as the line's comment and
		// then doubled by the next edit: a value is the value alone.
		if _, err := toml.Decode(s.Key+" = "+s.Value, &one); err != nil || len(one) != 1 || stripComment(s.Value) != s.Value {
			return nil, fmt.Errorf("value of %s: %q is not one TOML value", s.Key, s.Value)
		}
		want[s.Key] = one[s.Key]
	}
	out := edit(string(doc), table, sets)
	if err := check(oldDoc, out, table, want); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// check verifies an edited document: it parses, has the new values in
// table, and everything outside table is as it was.
func check(oldDoc map[string]any, out, table string, want map[string]any) error {
	var newDoc map[string]any
	if _, err := toml.Decode(out, &newDoc); err != nil {
		return fmt.Errorf("the edited document does not parse: %w", err)
	}
	for k, v := range oldDoc {
		if k != table && !reflect.DeepEqual(v, newDoc[k]) {
			return fmt.Errorf("the edit would change [%s]", k)
		}
	}
	for k := range newDoc {
		if _, ok := oldDoc[k]; !ok && k != table {
			return fmt.Errorf("the edit would add [%s]", k)
		}
	}
	tbl, _ := newDoc[table].(map[string]any)
	for k, v := range want {
		if !reflect.DeepEqual(tbl[k], v) {
			return fmt.Errorf("%s.%s did not take the new value", table, k)
		}
	}
	return nil
}

// bareKey reports whether s is a TOML bare key.
func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// edit is Set without the checks. It works on lines and leaves every other
// byte alone.
func edit(doc, table string, sets []Setting) string {
	eol := "\n"
	if strings.Contains(doc, "\r\n") {
		eol = "\r\n"
	}
	lines := splitKeepEOL(doc)
	start, end := -1, len(lines) // [table] header line, and the line after the table
	ml := multilineState{}
	for i, l := range lines {
		inString := ml.inside()
		ml.step(l)
		if inString {
			continue
		}
		name, ok := tableHeader(l)
		if !ok {
			continue
		}
		if start >= 0 {
			end = i
			break
		}
		if name == table {
			start = i
		}
	}
	pending := map[string]string{}
	var order []string
	for _, s := range sets {
		if _, ok := pending[s.Key]; !ok {
			order = append(order, s.Key)
		}
		pending[s.Key] = s.Value
	}
	if start < 0 {
		var b strings.Builder
		b.WriteString(doc)
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			b.WriteString(eol)
		}
		if strings.TrimSpace(doc) != "" {
			b.WriteString(eol)
		}
		b.WriteString("[" + table + "]" + eol)
		for _, k := range order {
			b.WriteString(k + " = " + pending[k] + eol)
		}
		return b.String()
	}
	lastKey := start
	ml = multilineState{}
	for i := start + 1; i < end; i++ {
		l := lines[i]
		inString := ml.inside()
		ml.step(l)
		if inString {
			continue
		}
		key, rest, ok := keyLine(l)
		if !ok {
			continue
		}
		lastKey = i
		v, want := pending[key]
		if !want {
			continue
		}
		lines[i] = l[:strings.IndexByte(l, '=')+1] + " " + v + trailingComment(rest) + lineEOL(l, eol)
		delete(pending, key)
	}
	var add strings.Builder
	for _, k := range order {
		if v, ok := pending[k]; ok {
			add.WriteString(k + " = " + v + eol)
		}
	}
	if add.Len() > 0 {
		if lineEOL(lines[lastKey], "") == "" {
			lines[lastKey] += eol
		}
		lines = append(lines[:lastKey+1], append([]string{add.String()}, lines[lastKey+1:]...)...)
	}
	return strings.Join(lines, "")
}

// splitKeepEOL splits s into lines that keep their "\n".
func splitKeepEOL(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func lineEOL(l, def string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"):
		return "\n"
	}
	return def
}

// tableHeader recognises "[name]" (with optional spaces, quotes and a
// trailing comment) and returns the name; array tables ("[[x]]") and
// dotted names are returned as written, so they never equal a bare table name.
func tableHeader(l string) (string, bool) {
	t := strings.TrimSpace(stripComment(l))
	if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
		return "", false
	}
	if strings.HasPrefix(t, "[[") {
		return t, true
	}
	name := strings.TrimSpace(t[1 : len(t)-1])
	if len(name) >= 2 && (name[0] == '"' || name[0] == '\'') && name[len(name)-1] == name[0] {
		name = name[1 : len(name)-1]
	}
	return name, true
}

// keyLine splits "key = value" into the key (bare or quoted) and the text
// after "=".
func keyLine(l string) (key, rest string, ok bool) {
	t := strings.TrimLeft(l, " \t")
	if t == "" || t[0] == '#' || t[0] == '[' {
		return "", "", false
	}
	eq := strings.IndexByte(t, '=')
	if eq <= 0 {
		return "", "", false
	}
	key = strings.TrimSpace(t[:eq])
	if len(key) >= 2 && (key[0] == '"' || key[0] == '\'') && key[len(key)-1] == key[0] {
		key = key[1 : len(key)-1]
	}
	if strings.ContainsAny(key, ". \t\"'") {
		return "", "", false // dotted or odd keys: left alone, check decides
	}
	return key, strings.TrimRight(t[eq+1:], "\r\n"), true
}

// trailingComment returns the comment after a value, with the spaces
// before it, or "".
func trailingComment(rest string) string {
	code := stripComment(rest)
	if len(code) == len(rest) {
		return ""
	}
	return rest[len(strings.TrimRight(code, " \t")):]
}

// stripComment drops a "#" comment that is not inside a one-line string.
func stripComment(l string) string {
	var q byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case q != 0 && c == '\\' && q == '"':
			i++
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q == 0 && c == '#':
			return l[:i]
		}
	}
	return l
}

// multilineState tracks whether a line starts inside a multi-line string
// (triple-quoted, with double or single quotes), whose lines must not be
// read as headers or keys.
type multilineState struct{ delim string }

func (m *multilineState) inside() bool { return m.delim != "" }

func (m *multilineState) step(l string) {
	for i := 0; i < len(l); {
		if m.delim != "" {
			// Inside a multi-line string: find its end (a basic string has
			// escapes).
			for i < len(l) && !strings.HasPrefix(l[i:], m.delim) {
				if m.delim == `"""` && l[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(l) {
				return
			}
			i += 3
			// Up to two more quotes belong to the string: """a"""" is a".
			for n := 0; n < 2 && i < len(l) && l[i] == m.delim[0]; n++ {
				i++
			}
			m.delim = ""
			continue
		}
		switch c := l[i]; {
		case c == '#':
			return
		case strings.HasPrefix(l[i:], `"""`), strings.HasPrefix(l[i:], `'''`):
			m.delim = l[i : i+3]
			i += 3
		case c == '"' || c == '\'':
			// A one-line string: quotes in it open nothing.
			i++
			for i < len(l) && l[i] != c {
				if c == '"' && l[i] == '\\' {
					i++
				}
				i++
			}
			i++
		default:
			i++
		}
	}
}
