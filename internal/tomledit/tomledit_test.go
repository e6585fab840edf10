package tomledit

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the out.toml of testdata/*.txtar")

func TestSet(t *testing.T) {
	set := []Setting{{"recent_keep", "4"}, {"interval", `"1h"`}}
	cases := []struct {
		name, doc, want string
	}{
		{"empty file", "", "[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"no table", "[search]\nresults = 3", "[search]\nresults = 3\n\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"replace in place, keep comments",
			"# top\n[reflector] # the reflector\n# keep\nrecent_keep = 12   # newest\nenabled = true\n\n[search]\nresults = 3\n",
			"# top\n[reflector] # the reflector\n# keep\nrecent_keep = 4   # newest\nenabled = true\ninterval = \"1h\"\n\n[search]\nresults = 3\n"},
		{"string value with a hash", "[reflector]\ninterval = \"3#0m\" # c\n", "[reflector]\ninterval = \"1h\" # c\nrecent_keep = 4\n"},
		{"multi-line string value with a hash on one line", "[reflector]\ninterval = \"\"\"3#0m\"\"\" # c\n", "[reflector]\ninterval = \"1h\" # c\nrecent_keep = 4\n"},
		{"array value with a hash", "[reflector]\ninterval = [\"#\", 'x#'] # c\n", "[reflector]\ninterval = \"1h\" # c\nrecent_keep = 4\n"},
		{"quoted header and key", "[ \"reflector\" ]\n\"recent_keep\" = 1\n", "[ \"reflector\" ]\n\"recent_keep\" = 4\ninterval = \"1h\"\n"},
		{"crlf", "[reflector]\r\nrecent_keep = 1\r\n[search]\r\nresults = 3\r\n", "[reflector]\r\nrecent_keep = 4\r\ninterval = \"1h\"\r\n[search]\r\nresults = 3\r\n"},
		{"header text in a multi-line string",
			"[summarizer]\ncommand = \"\"\"\n[reflector]\nrecent_keep = 1\n\"\"\"\n",
			"[summarizer]\ncommand = \"\"\"\n[reflector]\nrecent_keep = 1\n\"\"\"\n\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"triple quotes in a one-line string open nothing",
			"a = '\"\"\"'\n[reflector]\nrecent_keep = 1\n",
			"a = '\"\"\"'\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"multi-line string closed by four quotes",
			"a = \"\"\"x\n\"\"\"\"\n[reflector]\nrecent_keep = 1\n",
			"a = \"\"\"x\n\"\"\"\"\n[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"no final newline", "[reflector]\nrecent_keep = 1", "[reflector]\nrecent_keep = 4\ninterval = \"1h\"\n"},
		{"array table after", "[reflector]\nenabled = true\n[[hooks]]\nx = 1\n", "[reflector]\nenabled = true\nrecent_keep = 4\ninterval = \"1h\"\n[[hooks]]\nx = 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Set([]byte(c.doc), "reflector", set)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestSetRefuses(t *testing.T) {
	one := []Setting{{"recent_keep", "4"}}
	cases := []struct {
		name, doc, table string
		sets             []Setting
		parseError       bool
	}{
		{"dotted keys", "reflector.recent_keep = 3\n", "reflector", one, false},
		{"inline table", "reflector = { recent_keep = 3 }\n", "reflector", one, false},
		{"does not parse", "[reflector\n", "reflector", one, true},
		{"key in a multi-line value", "[reflector]\nrecent_keep = \"\"\"\nx\"\"\"\n", "reflector", one, false},
		{"table name not bare", "", "a.b", one, false},
		{"key not bare", "", "reflector", []Setting{{"a b", "1"}}, false},
		{"value on two lines", "", "reflector", []Setting{{"k", "1\n[x]"}}, false},
		{"value not TOML", "", "reflector", []Setting{{"k", "nope"}}, false},
		{"value with a second key", "", "reflector", []Setting{{"k", "1 j = 2"}}, false},
		{"nothing to set", "", "reflector", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Set([]byte(c.doc), c.table, c.sets)
			if err == nil {
				t.Fatalf("Set = %q, want an error", out)
			}
			var pe *ParseError
			if errors.As(err, &pe) != c.parseError {
				t.Errorf("err = %v (%T): ParseError %v, want %v", err, err, !c.parseError, c.parseError)
			}
		})
	}
}

// TestSetGolden edits the documents of testdata/*.txtar: "set" holds the
// table name on its first line and then key = value lines, "in.toml" the
// document, "out.toml" the expected result (go test -update rewrites it).
func TestSetGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]*txtar.File{}
			for i := range ar.Files {
				sec[ar.Files[i].Name] = &ar.Files[i]
			}
			if sec["set"] == nil || sec["in.toml"] == nil {
				t.Fatal(`want sections "set" and "in.toml"`)
			}
			lines := strings.Split(strings.TrimSpace(string(sec["set"].Data)), "\n")
			var sets []Setting
			for _, l := range lines[1:] {
				k, v, ok := strings.Cut(l, "=")
				if !ok {
					t.Fatalf("set line %q: want key = value", l)
				}
				sets = append(sets, Setting{strings.TrimSpace(k), strings.TrimSpace(v)})
			}
			got, err := Set(sec["in.toml"].Data, lines[0], sets)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if sec["out.toml"] == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "out.toml"})
					sec["out.toml"] = &ar.Files[len(ar.Files)-1]
				}
				sec["out.toml"].Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if sec["out.toml"] == nil {
				t.Fatal(`no "out.toml" section (go test -update writes it)`)
			}
			if want := sec["out.toml"].Data; string(got) != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// FuzzSet: given a document that parses, Set returns an error or a
// document that parses, holds the new value, has everything outside the
// table as it was, and is a fixed point (setting the same again changes
// nothing).
func FuzzSet(f *testing.F) {
	f.Add("# top\n[reflector] # c\nrecent_keep = 12   # newest\n\n[search]\nresults = 3\n", "reflector", "recent_keep", "4")
	f.Add("[search]\r\nresults = 3", "reflector", "interval", `"1h"`)
	f.Add("[summarizer]\ncommand = \"\"\"\n[reflector]\nx = 1\n\"\"\"\n", "reflector", "x", "2")
	f.Add("[reflector]\nenabled = true\n[[hooks]]\nx = 1\n", "reflector", "enabled", "false")
	f.Add("a = '\"\"\"'\nb = \"\"\"\n[manager]\n\"\"\"\n[manager]\nmining = true # on\n", "manager", "mining", "false")
	f.Add("[reflector]\nk = [\"#\", 1] # c\n", "reflector", "k", `["#", '#']`)
	f.Add("[a.reflector]\nx = 1\n", "reflector", "x", "1979-05-27T07:32:00Z")
	f.Fuzz(func(t *testing.T, doc, table, key, value string) {
		var oldDoc map[string]any
		if _, err := toml.Decode(doc, &oldDoc); err != nil {
			return
		}
		out, err := Set([]byte(doc), table, []Setting{{key, value}})
		if err != nil {
			return
		}
		var newDoc, one map[string]any
		if _, err := toml.Decode(string(out), &newDoc); err != nil {
			t.Fatalf("Set(%q) = %q, which does not parse: %v", doc, out, err)
		}
		if _, err := toml.Decode(key+" = "+value, &one); err != nil {
			t.Fatalf("Set took value %q, which does not parse: %v", value, err)
		}
		if tbl, _ := newDoc[table].(map[string]any); !reflect.DeepEqual(tbl[key], one[key]) {
			t.Fatalf("Set(%q) = %q: %s.%s is %v, want %v", doc, out, table, key, tbl[key], one[key])
		}
		delete(oldDoc, table)
		delete(newDoc, table)
		if !reflect.DeepEqual(oldDoc, newDoc) {
			t.Fatalf("Set(%q) = %q changed what is outside [%s]", doc, out, table)
		}
		again, err := Set(out, table, []Setting{{key, value}})
		if err != nil || string(again) != string(out) {
			t.Fatalf("Set(%q) = %q, and again %q (%v)", doc, out, again, err)
		}
	})
}
