package memfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/mdfence"
)

func TestTemplate(t *testing.T) {
	got := Template("ada", "Ada Lovelace")
	want, err := os.ReadFile(filepath.Join("testdata", "template.md"))
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.ReplaceAll(want, []byte("New (new)"), []byte("Ada Lovelace (ada)"))
	if !bytes.Equal(got, want) {
		t.Fatalf("Template =\n%s\nwant\n%s", got, want)
	}
	f, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{}
	for _, s := range f.Sections {
		kinds = append(kinds, s.Kind)
	}
	if !reflect.DeepEqual(kinds, []Kind{KindPinned, KindCondensed, KindRecent}) {
		t.Errorf("kinds = %v", kinds)
	}
	if len(f.Pinned()) != 0 || f.Condensed() != "" {
		t.Errorf("placeholders parsed as content: %q %q", f.Pinned(), f.Condensed())
	}
	if got := Template("x", "two\nlines"); bytes.Count(got, []byte("\n## ")) != 3 {
		t.Errorf("a newline in the name changed the structure:\n%s", got)
	}
}

func TestAppendSection(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		heading string
		body    string
		want    string // whole result
		wantErr string
	}{
		{
			name: "plain append", file: "# h\n## a\nx\n", heading: "2026-01-02 — b", body: "y\nz",
			want: "# h\n## a\nx\n## 2026-01-02 — b\ny\nz\n",
		},
		{
			name: "body trailing newline is its terminator", file: "## a\n", heading: "b", body: "y\n",
			want: "## a\n## b\ny\n",
		},
		{
			name: "empty body", file: "## a\n", heading: "b", body: "",
			want: "## a\n## b\n",
		},
		{
			name: "empty file", file: "", heading: "first", body: "x",
			want: "## first\nx\n",
		},
		{
			name: "missing final newline is added", file: "## a\nx", heading: "b", body: "y",
			want: "## a\nx\n## b\ny\n",
		},
		{
			name: "heading-like body lines are escaped", file: "## a\n", heading: "b",
			body: "## Recent\n## 📌 Durable facts (pinned — never condensed)\n### fine\n##fine\n",
			want: "## a\n## b\n\\## Recent\n\\## 📌 Durable facts (pinned — never condensed)\n### fine\n##fine\n",
		},
		{
			name: "headings inside a closed fence stay verbatim", file: "## a\n", heading: "b",
			body: "```\n## comment\n```\n## out\n",
			want: "## a\n## b\n```\n## comment\n```\n\\## out\n",
		},
		{
			name: "unbalanced fence in body is closed", file: "## a\n", heading: "b",
			body: "~~~~ sh\n## inside\n",
			want: "## a\n## b\n~~~~ sh\n## inside\n~~~~\n",
		},
		{
			name: "file ending in an unclosed fence is closed first", file: "## a\n````\ncode\n", heading: "b", body: "y",
			want: "## a\n````\ncode\n````\n## b\ny\n",
		},
		{
			name: "CRLF file gets CRLF lines", file: "## a\r\nx\r\n", heading: "b", body: "y\nz\r\nw\rv",
			want: "## a\r\nx\r\n## b\r\ny\r\nz\r\nw\r\nv\r\n",
		},
		{
			name: "lone CR cannot smuggle a heading", file: "## a\n", heading: "b", body: "x\r## evil",
			want: "## a\n## b\nx\n\\## evil\n",
		},
		{name: "newline in heading", file: "## a\n", heading: "b\n## c", wantErr: "single line"},
		{name: "CR in heading", file: "## a\n", heading: "b\rc", wantErr: "single line"},
		{name: "blank heading", file: "## a\n", heading: "  ", wantErr: "empty"},
		{name: "region heading", file: "## a\n", heading: "Recent", wantErr: "reserved for the recent region"},
		{name: "pinned region heading", file: "## a\n", heading: "📌 Durable facts (pinned — never condensed)", wantErr: "reserved for the pinned region"},
		{name: "condensed region heading", file: "## a\n", heading: "🗜 Condensed history", wantErr: "reserved for the condensed region"},
		{name: "NUL in body", file: "## a\n", heading: "b", body: "x\x00", wantErr: "body: NUL byte"},
		{name: "invalid UTF-8 in heading", file: "## a\n", heading: "b\xff", wantErr: "heading: invalid UTF-8"},
		{name: "invalid existing file", file: "## a\n\xff", heading: "b", wantErr: "existing file: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendSection([]byte(tt.file), tt.heading, tt.body)
			if !wantResult(t, got, err, tt.want, tt.wantErr) {
				return
			}
			checkAppended(t, []byte(tt.file), got, tt.heading, tt.body)
		})
	}
}

// checkAppended holds AppendSection's result to its contract: the old
// sections unchanged (the last old part may only gain a newline and a
// closing fence), plus exactly one new section with the given heading whose
// body lines are the input lines, modulo line endings and the "\" escape.
func checkAppended(t testing.TB, old, got []byte, heading, body string) {
	t.Helper()
	if !bytes.HasPrefix(got, old) {
		t.Fatalf("existing bytes changed")
	}
	of, err := Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	nf, err := Parse(got)
	if err != nil {
		t.Fatalf("result does not parse: %v", err)
	}
	if len(nf.Sections) != len(of.Sections)+1 {
		t.Fatalf("got %d sections, want %d", len(nf.Sections), len(of.Sections)+1)
	}
	// Everything but the last old part must be identical.
	if len(of.Sections) == 0 {
		checkGrowth(t, of.Header, nf.Header)
	} else {
		if nf.Header != of.Header {
			t.Fatalf("header changed")
		}
		for i := range len(of.Sections) - 1 {
			if nf.Sections[i] != of.Sections[i] {
				t.Fatalf("section %d changed: %+v -> %+v", i, of.Sections[i], nf.Sections[i])
			}
		}
		last := len(of.Sections) - 1
		o, n := of.Sections[last], nf.Sections[last]
		if o.Heading != n.Heading || o.Kind != n.Kind || o.StartLine != n.StartLine {
			t.Fatalf("last old section changed identity")
		}
		checkGrowth(t, o.Raw, n.Raw)
	}
	s := nf.Sections[len(nf.Sections)-1]
	if s.Heading != heading || s.Kind != KindSection {
		t.Fatalf("new section %q (%v), want %q", s.Heading, s.Kind, heading)
	}
	if !strings.HasSuffix(s.Raw, "\n") {
		t.Fatalf("new section lacks a final newline")
	}
	want := splitInput(body)
	var gotLines []string
	forLines(s.Body(), func(l string) { gotLines = append(gotLines, trimEOL(l)) })
	if len(gotLines) == len(want)+1 {
		// A closing fence may have been added.
		var fs mdfence.State
		for _, l := range want {
			fs.Step(l)
		}
		if !fs.Open() || gotLines[len(gotLines)-1] != fs.Closer() {
			t.Fatalf("extra last line %q is not a closing fence", gotLines[len(gotLines)-1])
		}
		gotLines = gotLines[:len(want)]
	}
	if len(gotLines) != len(want) {
		t.Fatalf("body has %d lines, want %d:\n%q\n%q", len(gotLines), len(want), gotLines, want)
	}
	for i := range want {
		if gotLines[i] != want[i] && gotLines[i] != `\`+want[i] {
			t.Fatalf("body line %d = %q, want %q", i, gotLines[i], want[i])
		}
		if gotLines[i] != want[i] && !strings.HasPrefix(want[i], "## ") {
			t.Fatalf("body line %d escaped needlessly: %q", i, gotLines[i])
		}
	}
}

// splitInput splits body text into lines the way AppendSection reads it.
func splitInput(body string) []string {
	if body == "" {
		return nil
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
}

// checkGrowth allows the last old part of a file to gain only a line ending
// and/or one closing fence line.
func checkGrowth(t testing.TB, old, got string) {
	t.Helper()
	extra, ok := strings.CutPrefix(got, old)
	if !ok {
		t.Fatalf("old text %q is not a prefix of %q", old, got)
	}
	extra = strings.TrimPrefix(strings.TrimPrefix(extra, "\r\n"), "\n")
	if extra == "" {
		return
	}
	if _, _, ok := mdfence.Opener(strings.TrimRight(extra, "\r\n")); !ok || strings.Trim(extra, "`~\r\n") != "" {
		t.Fatalf("old text grew by %q, not by a closing fence", extra)
	}
}

func TestAddPinned(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		fact    string
		want    string
		wantOK  bool
		wantErr string
	}{
		{
			name: "replaces placeholder", file: string(Template("a", "A")), fact: "use pnpm",
			want:   "# Memory — A (a)\n\n" + HeadingPinned + "\n- use pnpm\n" + HeadingCondensed + "\n_(none yet)_\n" + HeadingRecent + "\n",
			wantOK: true,
		},
		{
			name: "appends after last fact, before blank lines", file: "# h\n" + HeadingPinned + "\n- a\n\n" + HeadingRecent + "\n",
			fact: "- b", want: "# h\n" + HeadingPinned + "\n- a\n- b\n\n" + HeadingRecent + "\n", wantOK: true,
		},
		{
			name: "first of duplicate pinned regions", file: HeadingPinned + "\n- a\n## s\n" + HeadingPinned + "\n- c\n",
			fact: "b", want: HeadingPinned + "\n- a\n- b\n## s\n" + HeadingPinned + "\n- c\n", wantOK: true,
		},
		{
			name: "creates region after header", file: "# h\n\n## s\nx\n", fact: "📌 keep me",
			want: "# h\n\n" + HeadingPinned + "\n- 📌 keep me\n## s\nx\n", wantOK: true,
		},
		{
			name: "creates region in empty file", file: "", fact: "a",
			want: HeadingPinned + "\n- a\n", wantOK: true,
		},
		{
			name: "creates region after BOM", file: "\uFEFF## s\n", fact: "a",
			want: "\uFEFF" + HeadingPinned + "\n- a\n## s\n", wantOK: true,
		},
		{
			name: "header without final newline", file: "# h", fact: "a",
			want: "# h\n" + HeadingPinned + "\n- a\n", wantOK: true,
		},
		{
			name: "header-only file with unclosed fence", file: "```\n## x\n", fact: "a",
			want: "```\n## x\n```\n" + HeadingPinned + "\n- a\n", wantOK: true,
		},
		{
			name: "pinned region at EOF without newline", file: HeadingPinned + "\n- a", fact: "b",
			want: HeadingPinned + "\n- a\n- b", wantOK: true,
		},
		{
			name: "CRLF", file: HeadingPinned + "\r\n- a\r\n", fact: "b",
			want: HeadingPinned + "\r\n- a\r\n- b\r\n", wantOK: true,
		},
		{
			name: "duplicate refused", file: HeadingPinned + "\n- Use  pnpm\n", fact: "📌 Use pnpm",
			want: HeadingPinned + "\n- Use  pnpm\n",
		},
		{
			name: "pin line elsewhere counts as present", file: "## s\n📌 use pnpm\n", fact: "use pnpm",
			want: "## s\n📌 use pnpm\n",
		},
		{name: "multi-line fact", file: "", fact: "a\nb", wantErr: "single line"},
		{name: "blank fact", file: "", fact: " - ", wantErr: "empty or a placeholder"},
		{name: "placeholder fact", file: "", fact: "_(none yet)_", wantErr: "empty or a placeholder"},
		{name: "NUL fact", file: "", fact: "a\x00", wantErr: "fact: NUL"},
		{name: "bad file", file: "\xff", fact: "a", wantErr: "existing file: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := AddPinned([]byte(tt.file), tt.fact)
			if !wantResult(t, got, err, tt.want, tt.wantErr) {
				return
			}
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			of, _ := Parse([]byte(tt.file))
			nf, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(of.Pinned(), strings.TrimPrefix(tt.fact, "- ")); !reflect.DeepEqual(nf.Pinned(), want) && !containsAll(nf.Pinned(), want) {
				t.Errorf("Pinned() = %q, want all of %q", nf.Pinned(), want)
			}
			if len(nf.Recent()) != len(of.Recent()) {
				t.Errorf("recent sections changed: %d -> %d", len(of.Recent()), len(nf.Recent()))
			}
		})
	}
}

func containsAll(have, want []string) bool {
	keys := map[string]bool{}
	for _, h := range have {
		keys[NormalizeFact(h)] = true
	}
	for _, w := range want {
		if !keys[NormalizeFact(w)] {
			return false
		}
	}
	return true
}

func TestBuild(t *testing.T) {
	recent := func(raws ...string) []Section {
		var out []Section
		for _, r := range raws {
			f, err := Parse([]byte(r))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f.Sections...)
		}
		return out
	}
	tests := []struct {
		name       string
		header     string
		pinned     []string
		condensed  string
		recentBody string
		recent     []Section
		want       string
	}{
		{
			name: "typical", header: "# Memory — A (a)\n\n",
			pinned:    []string{"use pnpm", "📌 run tests", "- use  pnpm", "_(none yet)_", ""},
			condensed: "  summary\nof the past\n\n",
			recent:    recent("## 2026-01-02 — x\nbody\n", "## y\n"),
			want: "# Memory — A (a)\n\n" + HeadingPinned + "\n- use pnpm\n- 📌 run tests\n" +
				HeadingCondensed + "\nsummary\nof the past\n" + HeadingRecent + "\n## 2026-01-02 — x\nbody\n## y\n",
		},
		{
			name: "empty regions get placeholders",
			want: HeadingPinned + "\n" + Placeholder + "\n" + HeadingCondensed + "\n" + Placeholder + "\n" + HeadingRecent + "\n",
		},
		{
			name: "untrusted condensed text cannot add structure", header: "# h\n",
			pinned:    []string{"two\nlines"},
			condensed: "## Recent\n```\n## in code",
			want: "# h\n" + HeadingPinned + "\n- two lines\n" + HeadingCondensed + "\n\\## Recent\n```\n## in code\n```\n" +
				HeadingRecent + "\n",
		},
		{
			name: "recent body kept; non-last section without newline or with open fence is closed", header: "# h",
			recentBody: "kept",
			recent:     []Section{{Heading: "a", Raw: "## a\n~~~\n## code"}, {Heading: "b", Raw: "## b\nlast"}},
			want:       "# h\n" + HeadingPinned + "\n" + Placeholder + "\n" + HeadingCondensed + "\n" + Placeholder + "\n" + HeadingRecent + "\nkept\n## a\n~~~\n## code\n~~~\n## b\nlast",
		},
		{
			name: "CRLF header gives CRLF regions", header: "# h\r\n", pinned: []string{"a"}, condensed: "x\ny",
			recent: recent("## s\r\nb\r\n"),
			want:   "# h\r\n" + HeadingPinned + "\r\n- a\r\n" + HeadingCondensed + "\r\nx\r\ny\r\n" + HeadingRecent + "\r\n## s\r\nb\r\n",
		},
		{
			name: "heading smuggled into header is escaped", header: "\uFEFF## a\n# h\n",
			want: "\uFEFF\\## a\n# h\n" + HeadingPinned + "\n" + Placeholder + "\n" + HeadingCondensed + "\n" + Placeholder + "\n" + HeadingRecent + "\n",
		},
		{
			name: "hand-built section with Raw lacking its heading", recent: []Section{{Heading: "h\nx", Raw: "body\n## not a heading\n"}, {Heading: "last"}},
			want: HeadingPinned + "\n" + Placeholder + "\n" + HeadingCondensed + "\n" + Placeholder + "\n" + HeadingRecent + "\n## h x\nbody\n\\## not a heading\n## last\n",
		},
		{
			name: "hand-built section without Raw", recent: []Section{{Heading: "only heading"}},
			want: HeadingPinned + "\n" + Placeholder + "\n" + HeadingCondensed + "\n" + Placeholder + "\n" + HeadingRecent + "\n## only heading\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.header, tt.pinned, tt.condensed, tt.recentBody, tt.recent)
			if string(got) != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
			f, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			checkBuilt(t, f, len(tt.recent))
		})
	}
}

// checkBuilt holds a Build result to its shape: exactly one of each region,
// in order, then the recent sections.
func checkBuilt(t testing.TB, f *File, recent int) {
	t.Helper()
	want := []Kind{KindPinned, KindCondensed, KindRecent}
	for range recent {
		want = append(want, KindSection)
	}
	var got []Kind
	for _, s := range f.Sections {
		got = append(got, s.Kind)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("section kinds = %v, want %v", got, want)
	}
}

// TestBuildRoundTrip rebuilds every testdata file from its logical views:
// the result has the three regions once each, keeps every pinned fact, the
// condensed text, the recent body and every recent section, and building
// again from the rebuilt file changes nothing.
func TestBuildRoundTrip(t *testing.T) {
	forEachTestdataFile(t, func(t *testing.T, _ string, _ []byte, f *File) {
		checkRebuild(t, f)
	})
}

// TestBuildRoundTripEdgeCases rebuilds small files that stress the
// rebuild: fences and headings across regions, lone CRs, placeholders.
func TestBuildRoundTripEdgeCases(t *testing.T) {
	tests := []string{
		HeadingCondensed + "\nx\r## y\n" + HeadingRecent + "\n",
		HeadingCondensed + "\n```\n## Recent\n",
		HeadingCondensed + "\n  _(none)_\n## 📌 Durable facts\n📌\n- \n## Recent\r\n```\n",
		"\uFEFF",
		"\uFEFF```\n## a",
		"\r",
		"# h\r",
		HeadingRecent + "\n## a\n```\n## b\n",
		HeadingCondensed + "\n~~~\n~~~\n   \t## x\n" + HeadingRecent + "\n",
		HeadingCondensed + "\n x\n## s\n" + HeadingCondensed + "\n```\n",
		HeadingRecent + "\nbody ``` not a fence\n~~~\n",
	}
	for _, tt := range tests {
		f, err := Parse([]byte(tt))
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, []byte(tt), f)
		checkRebuild(t, f)
	}
}

// looseText undoes what Build may do to condensed text: line endings
// normalised and heading-like lines escaped.
func looseText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\\## ", "## ")
}

func checkRebuild(t testing.TB, f *File) {
	t.Helper()
	b1 := Build(f.Header, f.Pinned(), f.Condensed(), f.RecentBody(), f.Recent())
	g, err := Parse(b1)
	if err != nil {
		t.Fatalf("Build result does not parse: %v", err)
	}
	checkBuilt(t, g, len(f.Recent()))
	if !containsAll(g.Pinned(), f.Pinned()) {
		t.Fatalf("pinned facts lost: %q -> %q", f.Pinned(), g.Pinned())
	}
	if c := f.Condensed(); !strings.Contains(looseText(g.Condensed()), looseText(c)) {
		t.Fatalf("condensed text changed: %q -> %q", c, g.Condensed())
	}
	if !strings.HasPrefix(g.RecentBody(), f.RecentBody()) {
		t.Fatalf("recent body changed: %q -> %q", f.RecentBody(), g.RecentBody())
	}
	for i, s := range f.Recent() {
		n := g.Recent()[i]
		if n.Heading != s.Heading || !strings.HasPrefix(n.Raw, s.Raw) {
			t.Fatalf("recent section %d changed: %q -> %q", i, s.Raw, n.Raw)
		}
		if i == len(f.Recent())-1 && n.Raw != s.Raw {
			t.Fatalf("last recent section changed: %q -> %q", s.Raw, n.Raw)
		}
	}
	b2 := Build(g.Header, g.Pinned(), g.Condensed(), g.RecentBody(), g.Recent())
	if !bytes.Equal(b1, b2) {
		t.Fatalf("Build is not idempotent:\n%q\n%q", b1, b2)
	}
}

// TestAppendNewSectionReturnsTheSectionAsItParses: the section
// AppendNewSection returns is the new file's last section, lines and all,
// whatever the file ended with (no final newline, an open fence, CRLF
// line endings, a BOM, nothing at all).
func TestAppendNewSectionReturnsTheSectionAsItParses(t *testing.T) {
	for _, tc := range []struct{ name, file, body string }{
		{"template", string(Template("a", "a")), "one\ntwo\n"},
		{"no final newline", "# M\n## 2026-01-01 — old\nlast line", "body"},
		{"open fence", "# M\n## 2026-01-01 — old\n```\ncode\n", "## looks like a heading\n"},
		{"crlf", "# M\r\n## 2026-01-01 — old\r\nx\r\n", "a\nb\n"},
		{"bom", "\ufeff## 2026-01-01 — old\nx\n", ""},
		{"empty", "", "only\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, got, err := AppendNewSection([]byte(tc.file), "2026-12-02 — new", tc.body)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := f.Sections[len(f.Sections)-1]; got != want {
				t.Errorf("returned %+v\nfile's last section %+v", got, want)
			}
			if got.Heading != "2026-12-02 — new" || got.Date != "2026-12-02" || got.StartLine == 0 {
				t.Errorf("returned %+v", got)
			}
		})
	}
}
