package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// TestTextAfterDash: text arguments of remember, pin and search that begin
// with '-' are moved behind "--"; flags, wherever they are, stay flags.
func TestTextAfterDash(t *testing.T) {
	root := newRootCommand(&globals{})
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"remember", "alice", "- note"}, []string{"remember", "alice", "--", "- note"}},
		{[]string{"--home", "/h", "remember", "alice", "-x", "--heading", "h"}, []string{"--home", "/h", "remember", "alice", "--heading", "h", "--", "-x"}},
		{[]string{"remember", "alice", "note", "--heading", "- h"}, []string{"remember", "alice", "note", "--heading", "- h"}},
		{[]string{"remember", "alice", "--heading=- h", "- note", "--json"}, []string{"remember", "alice", "--heading=- h", "--json", "--", "- note"}},
		{[]string{"pin", "alice", "- fact"}, []string{"pin", "alice", "--", "- fact"}},
		{[]string{"search", "-skew cookie"}, []string{"search", "--", "-skew cookie"}},
		{[]string{"search", "-skew", "-n", "3", "cookie", "--", "-x"}, []string{"search", "-n", "3", "--", "-skew", "cookie", "-x"}},
		{[]string{"search", "-n3", "login"}, []string{"search", "-n3", "login"}},
		{[]string{"search", "-n", "3", "login"}, []string{"search", "-n", "3", "login"}},
		{[]string{"search", "--wing", "-w", "login"}, []string{"search", "--wing", "-w", "login"}},
		{[]string{"search", "--", "-skew"}, []string{"search", "--", "-skew"}},
		{[]string{"search", "login", "--bogus"}, []string{"search", "login", "--bogus"}},
		{[]string{"search", "login", "-h"}, []string{"search", "login", "-h"}},
		{[]string{"remember", "alice", "-"}, []string{"remember", "alice", "-"}},
		{[]string{"mine", "-x"}, []string{"mine", "-x"}}, // not a text command
		{[]string{"spawn", "alice", "--", "-x"}, []string{"spawn", "alice", "--", "-x"}},
	} {
		if got := textAfterDash(root, c.in); !slices.Equal(got, c.want) {
			t.Errorf("%q -> %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGroupCommands: a parent command refuses an unknown subcommand and
// still prints its help without one.
func TestGroupCommands(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"model", "fecth"}, 1, `unknown command "fecth" for "hivemem model"; did you mean fetch?`},
		{[]string{"bench", "locomoo", "x"}, 1, `unknown command "locomoo" for "hivemem bench"; did you mean locomo?`},
		{[]string{"bench", "nothing"}, 1, `unknown command "nothing" for "hivemem bench"`},
		{[]string{"model"}, 0, "Available Commands"},
		{[]string{"bench"}, 0, "Available Commands"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), c.args, strings.NewReader(""), &out, &errOut)
		if code != c.code || !strings.Contains(out.String()+errOut.String(), c.want) {
			t.Errorf("%q: exit %d, out %q, err %q; want exit %d and %q", c.args, code, out.String(), errOut.String(), c.code, c.want)
		}
	}
}
