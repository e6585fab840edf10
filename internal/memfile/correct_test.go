package memfile

import (
	"strings"
	"testing"
)

const correctFile = "# Memory — a (a)\n\n" +
	HeadingPinned + "\n- db is PostgreSQL 15\n- deploys on Fridays are forbidden\n" +
	HeadingCondensed + "\n" + Placeholder + "\n" +
	HeadingRecent + "\n" +
	"## 2026-11-02 — deploy command\nDeploy with `make deploy`.\n\n" +
	"## 2026-11-10 — api key\nkey: sk-secret-123\nrotate monthly\n" +
	"## 2026-11-12 — notes\n" + "```\n## not a heading\n```\n" +
	"## 2026-11-20 — notes\nsecond notes\n"

func TestSupersedeMarksBothSections(t *testing.T) {
	out, old, err := Supersede([]byte(correctFile), "deploy command", "2026-12-01 — deploy command", "Deploy with `make release`.")
	if err != nil {
		t.Fatal(err)
	}
	if old != "2026-11-02 — deploy command" {
		t.Errorf("old heading = %q", old)
	}
	f, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	oldAt, _ := f.FindSection("2026-11-02 — deploy command")
	newAt, _ := f.FindSection("2026-12-01 — deploy command")
	if got := f.Sections[oldAt]; got.SupersededBy != "2026-12-01 — deploy command" || !strings.Contains(got.Raw, "`make deploy`") {
		t.Errorf("old section = %+v", got)
	}
	if got := f.Sections[newAt]; got.Supersedes != old || !strings.HasSuffix(got.Raw, "Deploy with `make release`.\n") {
		t.Errorf("new section = %+v", got)
	}
	want := "## 2026-11-02 — deploy command\n> superseded by: 2026-12-01 — deploy command\nDeploy with `make deploy`.\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("marker not where a reader sees it:\n%s", out)
	}
	// Superseding again replaces the marker, never stacks it.
	out2, _, err := Supersede(out, "2026-11-02 — deploy command", "2026-12-05 — deploy command", "x")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out2), "> superseded by:"); n != 1 {
		t.Errorf("%d superseded-by markers after a second supersession:\n%s", n, out2)
	}
}

func TestSupersedeRefusals(t *testing.T) {
	tests := []struct {
		name, ref, heading, want string
	}{
		{"unknown section", "nope", "2026-12-01 — x", `no section "nope"`},
		{"ambiguous title", "notes", "2026-12-01 — x", "2 sections are headed"},
		{"region heading", "Recent", "2026-12-01 — x", "no section"},
		{"empty ref", "  ", "2026-12-01 — x", "heading is empty"},
		{"bad new heading", "deploy command", "a\nb", "single line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Supersede([]byte(correctFile), tt.ref, tt.heading, "body")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseMarkers(t *testing.T) {
	tests := []struct {
		name, body, by, sup string
	}{
		{"none", "text\n", "", ""},
		{"superseded", "> superseded by: 2026-12-01 — x\ntext\n", "2026-12-01 — x", ""},
		{"keyword case and blank line first", "\n> Superseded By:  y \ntext\n", "y", ""},
		{"both", "> supersedes: a\n> superseded by: b\n", "b", "a"},
		{"after text is a quote, not a marker", "text\n> superseded by: b\n", "", ""},
		{"empty value", "> superseded by:\ntext\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte("## 2026-11-01 — s\n" + tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if s := f.Sections[0]; s.SupersededBy != tt.by || s.Supersedes != tt.sup {
				t.Errorf("markers = %q, %q; want %q, %q", s.SupersededBy, s.Supersedes, tt.by, tt.sup)
			}
		})
	}
}

func TestRemoveSection(t *testing.T) {
	tests := []struct {
		name, file, ref, want, wantErr string
	}{
		{"middle", correctFile, "api key", strings.Replace(correctFile, "## 2026-11-10 — api key\nkey: sk-secret-123\nrotate monthly\n", "", 1), ""},
		{"last without newline", "## a\nx\n## b\ny", "b", "## a\nx\n", ""},
		{"section with a fenced heading", correctFile, "2026-11-12 — notes", strings.Replace(correctFile, "## 2026-11-12 — notes\n```\n## not a heading\n```\n", "", 1), ""},
		{"ambiguous", correctFile, "notes", "", "2 sections"},
		{"region", correctFile, HeadingPinned, "", "no section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, s, err := RemoveSection([]byte(tt.file), tt.ref)
			if !wantResult(t, out, err, tt.want, tt.wantErr) {
				return
			}
			if !strings.Contains(tt.file, s.Raw) || s.Raw == "" {
				t.Errorf("removed section %q is not from the file", s.Raw)
			}
		})
	}
}

func TestRemoveLine(t *testing.T) {
	tests := []struct {
		name, ref, needle, want, wantErr string
		line                             int
	}{
		{"anywhere", "", "sk-secret", strings.Replace(correctFile, "key: sk-secret-123\n", "", 1), "", 13},
		{"in a section", "api key", "rotate", strings.Replace(correctFile, "rotate monthly\n", "", 1), "", 14},
		{"not in that section", "deploy command", "rotate", "", "no line of section", 0},
		{"several lines", "", "notes", "", "lines contain", 0},
		{"a heading", "", "— api key", "", "forget the section instead", 0},
		{"a fence line", "", "```", "", "lines contain", 0},
		{"nothing", "", "zzz", "", "no line contains", 0},
		{"empty", "", " ", "", "not empty", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, l, err := RemoveLine([]byte(correctFile), tt.ref, tt.needle)
			if !wantResult(t, out, err, tt.want, tt.wantErr) {
				return
			}
			if l.Number != tt.line || !strings.Contains(l.Text, tt.needle) {
				t.Errorf("line = %+v, want number %d", l, tt.line)
			}
		})
	}
	// A line that opens a code block would change the structure.
	if _, _, err := RemoveLine([]byte("## a\n```x\n## b\n```\n"), "", "```x"); err == nil || !strings.Contains(err.Error(), "code block") {
		t.Errorf("removing a fence line: err = %v", err)
	}
}

func TestRemoveLinesContaining(t *testing.T) {
	out, n := RemoveLinesContaining([]byte("a\nsecret one\r\nb\nsecret"), "secret")
	if string(out) != "a\nb\n" || n != 2 {
		t.Errorf("got %q, %d", out, n)
	}
	if out, n := RemoveLinesContaining([]byte("a\n"), ""); string(out) != "a\n" || n != 0 {
		t.Errorf("empty needle removed %d lines", n)
	}
}

func TestPinnedCorrections(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		fact      string
		with      string // "" unpins
		want      string
		wantFacts []string
		wantErr   string
	}{
		{
			name: "replace in place", file: correctFile, fact: "db is PostgreSQL 15", with: "db is PostgreSQL 16",
			want:      strings.Replace(correctFile, "- db is PostgreSQL 15\n", "- db is PostgreSQL 16\n", 1),
			wantFacts: []string{"db is PostgreSQL 16", "deploys on Fridays are forbidden"},
		},
		{
			name: "unpin", file: correctFile, fact: "- deploys on Fridays are forbidden",
			want:      strings.Replace(correctFile, "- deploys on Fridays are forbidden\n", "", 1),
			wantFacts: []string{"db is PostgreSQL 15"},
		},
		{
			name: "last fact leaves the placeholder", file: HeadingPinned + "\n- only\n## b\n", fact: "only",
			want: HeadingPinned + "\n" + Placeholder + "\n## b\n",
		},
		{
			name: "pin line outside a region stays pinned", file: "## a\n- 📌 old rule\ntext\n", fact: "📌 old rule", with: "new rule",
			want: "## a\n- 📌 new rule\ntext\n", wantFacts: []string{"📌 new rule"},
		},
		{
			name: "replacement already pinned: only the old goes", file: correctFile, fact: "db is PostgreSQL 15", with: "deploys on Fridays are forbidden",
			want:      strings.Replace(correctFile, "- db is PostgreSQL 15\n", "", 1),
			wantFacts: []string{"deploys on Fridays are forbidden"},
		},
		{name: "not pinned", file: correctFile, fact: "db is MySQL", wantErr: "not a pinned fact"},
		{name: "two lines", file: correctFile, fact: "a\nb", wantErr: "one-line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []byte
			var err error
			if tt.with == "" {
				out, _, err = RemovePinned([]byte(tt.file), tt.fact)
			} else {
				out, _, err = ReplacePinned([]byte(tt.file), tt.fact, tt.with)
			}
			if !wantResult(t, out, err, tt.want, tt.wantErr) {
				return
			}
			f, _ := Parse(out)
			if got := f.Pinned(); strings.Join(got, "|") != strings.Join(tt.wantFacts, "|") {
				t.Errorf("facts = %q, want %q", got, tt.wantFacts)
			}
		})
	}
}

// FuzzCorrections: removing or superseding a section of any file either
// fails with an error or leaves every other section byte for byte.
func FuzzCorrections(f *testing.F) {
	addSeeds(f, func(data []byte) { f.Add(data, "notes") })
	f.Add([]byte(correctFile), "deploy command")
	f.Add([]byte("## a\n```\n## b\n"), "a")
	f.Fuzz(func(t *testing.T, data []byte, ref string) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		out, removed, err := RemoveSection(data, ref)
		if err == nil {
			g, perr := Parse(out)
			if perr != nil || len(g.Sections) != len(file.Sections)-1 {
				t.Fatalf("remove %q: %d sections, want %d (%v)", ref, len(g.Sections), len(file.Sections)-1, perr)
			}
			if !strings.Contains(string(data), removed.Raw) {
				t.Fatalf("removed text is not the file's")
			}
		}
		out, _, err = Supersede(data, ref, "2099-01-01 — new", "body")
		if err != nil {
			return
		}
		g, perr := Parse(out)
		if perr != nil || len(g.Sections) != len(file.Sections)+1 {
			t.Fatalf("supersede %q: %d sections, want %d (%v)", ref, len(g.Sections), len(file.Sections)+1, perr)
		}
		i, _ := file.FindSection(ref)
		for k, s := range file.Sections {
			if k != i && k < len(g.Sections) && g.Sections[k].Raw != s.Raw && !(k == len(file.Sections)-1) {
				t.Fatalf("supersede changed section %d: %q -> %q", k, s.Raw, g.Sections[k].Raw)
			}
		}
		if g.Sections[i].SupersededBy != "2099-01-01 — new" {
			t.Fatalf("old section not marked: %q", g.Sections[i].Raw)
		}
	})
}

// wantResult checks an edit's result against a table row: an error
// containing wantErr when that is set, else no error and want. It reports
// whether the test goes on with the result.
func wantResult(t *testing.T, out []byte, err error, want, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
	return true
}

// TestSupersedeSectionReturnsBothSectionsAsTheyParse: the old section
// (marked) and the new one, as the new file parses.
func TestSupersedeSectionReturnsBothSectionsAsTheyParse(t *testing.T) {
	out, old, added, err := SupersedeSection([]byte(correctFile), "2026-11-10 — api key", "2026-12-01 — api key", "rotated\n")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	i, err := f.FindSection("2026-11-10 — api key")
	if err != nil {
		t.Fatal(err)
	}
	if old != f.Sections[i] || old.SupersededBy != "2026-12-01 — api key" {
		t.Errorf("old = %+v\nwant %+v", old, f.Sections[i])
	}
	if last := f.Sections[len(f.Sections)-1]; added != last || added.Supersedes != "2026-11-10 — api key" {
		t.Errorf("added = %+v\nwant %+v", added, last)
	}
}
