package memfile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current parser")

// golden is the parsed structure of a testdata file, as pinned in its
// .golden.json: the raw parse plus the logical views built on it.
type golden struct {
	Header      string          `json:"header"`
	HeaderLines int             `json:"header_lines"`
	Sections    []goldenSection `json:"sections"`
	HasRegions  bool            `json:"has_regions"`
	Pinned      []string        `json:"pinned"`
	Condensed   string          `json:"condensed"`
	RecentBody  string          `json:"recent_body"`
	Recent      []string        `json:"recent"`
}

type goldenSection struct {
	Kind      string `json:"kind"`
	Heading   string `json:"heading"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Date      string `json:"date,omitempty"`
	Raw       string `json:"raw"`
}

func toGolden(f *File) golden {
	g := golden{
		Header:      f.Header,
		HeaderLines: f.HeaderLines,
		Sections:    []goldenSection{},
		HasRegions:  f.HasRegions(),
		Pinned:      f.Pinned(),
		Condensed:   f.Condensed(),
		RecentBody:  f.RecentBody(),
		Recent:      []string{},
	}
	if g.Pinned == nil {
		g.Pinned = []string{}
	}
	for _, s := range f.Sections {
		g.Sections = append(g.Sections, goldenSection{
			Kind: s.Kind.String(), Heading: s.Heading, StartLine: s.StartLine,
			EndLine: s.EndLine, Date: s.Date, Raw: s.Raw,
		})
	}
	for _, s := range f.Recent() {
		g.Recent = append(g.Recent, s.Heading)
	}
	return g
}

// testdataFiles returns the memory files in testdata (not the golden files).
func testdataFiles(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 10 {
		t.Fatalf("only %d testdata files", len(paths))
	}
	return paths
}

// forEachTestdataFile runs check, as a subtest named for the file, on
// each testdata memory file and its parse.
func forEachTestdataFile(t *testing.T, check func(t *testing.T, path string, data []byte, f *File)) {
	for _, path := range testdataFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			check(t, path, data, f)
		})
	}
}

func TestGolden(t *testing.T) {
	forEachTestdataFile(t, func(t *testing.T, path string, data []byte, f *File) {
		if got := f.Render(); !bytes.Equal(got, data) {
			t.Fatalf("Render differs from input:\n got %q\nwant %q", got, data)
		}
		checkInvariants(t, data, f)

		got, err := json.MarshalIndent(toGolden(f), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		goldenPath := strings.TrimSuffix(path, ".md") + ".golden.json"
		if *update {
			if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(goldenPath)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("parse differs from %s (go test -update to accept):\n%s", goldenPath, got)
		}
	})
}

// checkInvariants holds a parse to the rules every parse must follow.
func checkInvariants(t testing.TB, data []byte, f *File) {
	t.Helper()
	if !bytes.Equal(f.Render(), data) {
		t.Fatalf("Render is not byte-identical to the input")
	}
	next := f.HeaderLines + 1
	for i, s := range f.Sections {
		if !strings.HasPrefix(s.Raw, "## ") {
			t.Fatalf("section %d Raw does not start with a heading: %q", i, s.Raw)
		}
		if trimEOL(firstLine(s.Raw)) != "## "+s.Heading {
			t.Fatalf("section %d heading %q does not match Raw %q", i, s.Heading, s.Raw)
		}
		if firstLine(s.Raw)+s.Body() != s.Raw {
			t.Fatalf("section %d: heading line + Body != Raw", i)
		}
		if s.StartLine != next {
			t.Fatalf("section %d starts at line %d, want %d", i, s.StartLine, next)
		}
		if lines := strings.Count(s.Raw, "\n") + boolInt(!strings.HasSuffix(s.Raw, "\n")); s.EndLine != s.StartLine+lines-1 {
			t.Fatalf("section %d ends at line %d, want %d", i, s.EndLine, s.StartLine+lines-1)
		}
		if i < len(f.Sections)-1 && !strings.HasSuffix(s.Raw, "\n") {
			t.Fatalf("section %d is not last but lacks a final newline", i)
		}
		next = s.EndLine + 1
	}
	for _, p := range f.Pinned() {
		if p == "" || strings.ContainsAny(p, "\r\n") || NormalizeFact(p) == "" {
			t.Fatalf("bad pinned fact %q", p)
		}
		if isPlaceholder(p) {
			t.Fatalf("placeholder %q returned as a fact", p)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"invalid UTF-8", "# x\n## a\n\xff\xfe\n", "invalid UTF-8 at line 3"},
		{"truncated rune", "## a\n\xe2\x82", "invalid UTF-8 at line 2"},
		{"NUL byte", "# x\n\x00", "NUL byte at line 2"},
		{"surrogate half", "\xed\xa0\x80", "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	tests := []struct {
		heading string
		want    Kind
	}{
		{strings.TrimPrefix(HeadingPinned, "## "), KindPinned},
		{strings.TrimPrefix(HeadingCondensed, "## "), KindCondensed},
		{strings.TrimPrefix(HeadingRecent, "## "), KindRecent},
		{"📌️ Durable facts (pinned — never condensed)", KindPinned}, // variation selector
		{"📌 Durable facts", KindPinned},
		{"🗜️ Condensed history ", KindCondensed},
		{"recent", KindRecent},
		{" Recent ", KindRecent},
		{"Recent work on X", KindSection},
		{"Durable facts", KindSection},
		{"📌 pinned idea", KindSection},
		{"2026-11-29 — fixed flaky login test", KindSection},
	}
	for _, tt := range tests {
		if got := kindOf(tt.heading); got != tt.want {
			t.Errorf("kindOf(%q) = %v, want %v", tt.heading, got, tt.want)
		}
	}
}

func TestDate(t *testing.T) {
	tests := []struct {
		heading string
		want    string
	}{
		{"2026-11-29 — fixed flaky login test", "2026-11-29"},
		{"Session 3 (2023-05-08)", "2023-05-08"},
		{"2024-02-29 leap day", "2024-02-29"},
		{"2023-02-29 not a leap year", ""},
		{"2026-13-01 bad month", ""},
		{"2026-00-10 bad month", ""},
		{"2026-04-31 bad day", ""},
		{"12026-01-01 too many digits", ""},
		{"2026-01-011", ""},
		{"2026-1-1 short", ""},
		{"bad 2026-02-30 then good 2026-03-01", "2026-03-01"},
		{"2026-11-29T10:00Z", "2026-11-29"},
		{"no date here", ""},
		{"", ""},
		{"日本 2026-01-02 日本", "2026-01-02"},
	}
	for _, tt := range tests {
		if got := findDate(tt.heading); got != tt.want {
			t.Errorf("findDate(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestNormalizeFact(t *testing.T) {
	same := []string{"X y", "- X y", "* X y", "📌 X y", "- 📌 X y", "  X   y  ", "📌️X y", "-\tX\ty", "- - X y"}
	for _, s := range same {
		if got := NormalizeFact(s); got != "X y" {
			t.Errorf("NormalizeFact(%q) = %q, want %q", s, got, "X y")
		}
	}
	different := []struct{ s, want string }{
		{"x y", "x y"}, // case is kept
		{"X y.", "X y."},
		{"*emphasis* stays", "*emphasis* stays"},
		{"-5 degrees", "-5 degrees"},
		{"📌", ""},
		{"- ", ""},
	}
	for _, tt := range different {
		if got := NormalizeFact(tt.s); got != tt.want {
			t.Errorf("NormalizeFact(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestPlaceholders: only the placeholder hivemem writes (Template, Build;
// the system it replaces wrote the same text) is one. Lines that merely look
// like placeholders were written by someone and are facts: reading them as
// placeholders would drop them on the next condensation.
func TestPlaceholders(t *testing.T) {
	tests := []struct {
		line        string
		placeholder bool
	}{
		{"_(none yet)_", true},
		{"- _(none yet)_", true},
		{"* _(none yet)_", true},
		{"  _(none yet)_  ", true},
		{"_(none yet)_\r\n", true}, // a CRLF file
		{"_(none yet)_\n", true},
		{Placeholder, true},
		{"_(none)_", false},
		{"(none yet)", false},
		{"_none_", false},
		{"*nothing yet*", false},
		{"  _(None yet.)_  ", false},
		{"**(none so far)**", false},
		{"none", false},
		{"None yet", false},
		{"*Nothing runs on Fridays*", false},
		{"(none on staging hosts)", false},
		{"_None of it is cached_", false},
		{"None of the integration tests need network.", false},
		{"_None of the integration tests need network_", false},
		{"nothing", false},
		{"(see below)", false},
		{"_important_", false},
		{"📌 _(none yet)_", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isPlaceholderLine(tt.line); got != tt.placeholder {
			t.Errorf("isPlaceholderLine(%q) = %v, want %v", tt.line, got, tt.placeholder)
		}
	}
}

func TestPinned(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{
			name: "pinned region facts, bullets stripped",
			file: HeadingPinned + "\n- a\n* b\nc\n\n  - d  \n",
			want: []string{"a", "b", "c", "d"},
		},
		{
			name: "placeholders are never facts",
			file: HeadingPinned + "\n_(none yet)_\n- _(none yet)_\n- real\n" + HeadingCondensed + "\n_(none yet)_\n",
			want: []string{"real"},
		},
		{
			name: "a file written by an earlier version: template, CRLF, placeholders in both regions",
			file: "# Memory — Old (old)\r\n\r\n" + HeadingPinned + "\r\n" + Placeholder + "\r\n" + HeadingCondensed + "\r\n" + Placeholder + "\r\n" + HeadingRecent + "\r\n## 2026-01-02 — x\r\nbody\r\n",
			want: nil,
		},
		{
			name: "look-alikes someone wrote are facts",
			file: HeadingPinned + "\n- *Nothing runs on Fridays*\n(none on staging hosts)\n_none_\n" + Placeholder + "\n",
			want: []string{"*Nothing runs on Fridays*", "(none on staging hosts)", "_none_"},
		},
		{
			name: "duplicate pinned regions merge in order, deduped",
			file: HeadingPinned + "\n- a\n- b\n" + HeadingRecent + "\n## s\nx\n" + HeadingPinned + "\n- c\n-  a \n",
			want: []string{"a", "b", "c"},
		},
		{
			name: "pin lines anywhere count, in document order",
			file: "📌 in header\n## s\n- 📌 in section\ntext\n   📌 indented\n" + HeadingCondensed + "\n📌 in condensed\n",
			want: []string{"📌 in header", "📌 in section", "📌 indented", "📌 in condensed"},
		},
		{
			name: "pin line duplicates a pinned fact",
			file: HeadingPinned + "\n- 📌 run tests\n## s\n📌   run tests\n* run tests\n",
			want: []string{"📌 run tests"},
		},
		{
			name: "pin not at line start is not pinned",
			file: "## s\ntext 📌 here\n> 📌 quoted\n",
			want: nil,
		},
		{
			name: "ordinary sections contribute only pin lines",
			file: "## s\n- a\n- b\n",
			want: nil,
		},
		{
			name: "CRLF",
			file: HeadingPinned + "\r\n- a\r\n\r\n",
			want: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Pinned(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Pinned() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCondensedAndRecent(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		condensed  string
		recentBody string
		recent     []string
	}{
		{
			name:      "never condensed",
			file:      "# h\n## a\nx\n## b\ny\n",
			condensed: "", recent: []string{"a", "b"},
		},
		{
			name:      "placeholder only",
			file:      HeadingCondensed + "\n_(none yet)_\n" + HeadingRecent + "\n",
			condensed: "", recent: nil,
		},
		{
			name:       "duplicate condensed and recent merged",
			file:       HeadingCondensed + "\n\none\n\n" + HeadingRecent + "\nkept\n## a\nx\n" + HeadingCondensed + "\r\ntwo\r\nlines\r\n" + HeadingRecent + "\nalso kept\n## b\n",
			condensed:  "one\n\ntwo\nlines",
			recentBody: "kept\nalso kept\n",
			recent:     []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Condensed(); got != tt.condensed {
				t.Errorf("Condensed() = %q, want %q", got, tt.condensed)
			}
			if got := f.RecentBody(); got != tt.recentBody {
				t.Errorf("RecentBody() = %q, want %q", got, tt.recentBody)
			}
			var got []string
			for _, s := range f.Recent() {
				got = append(got, s.Heading)
			}
			if !reflect.DeepEqual(got, tt.recent) {
				t.Errorf("Recent() = %q, want %q", got, tt.recent)
			}
		})
	}
}

func TestBody(t *testing.T) {
	tests := []struct{ raw, body string }{
		{"## a\nx\ny\n", "x\ny\n"},
		{"## a\r\nx\r\n", "x\r\n"},
		{"## a", ""},
		{"## a\n", ""},
	}
	for _, tt := range tests {
		if got := (Section{Raw: tt.raw}).Body(); got != tt.body {
			t.Errorf("Body of %q = %q, want %q", tt.raw, got, tt.body)
		}
	}
}
