package memfile

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// addSeeds adds every testdata memory file to the fuzz corpus.
func addSeeds(f *testing.F, add func(data []byte)) {
	for _, path := range testdataFiles(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

// validText is the independent statement of what Parse accepts.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.Contains(s, "\x00")
}

// FuzzRoundTrip: any valid UTF-8 input without NUL parses, renders back
// byte-identically, satisfies the parse invariants, and rebuilds (Build)
// into a well-formed condensed file that keeps everything.
func FuzzRoundTrip(f *testing.F) {
	addSeeds(f, func(data []byte) { f.Add(data) })
	f.Add([]byte("```\n## a\n```\n## b\n"))
	f.Add([]byte("\r\n## a\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if !validText(string(data)) {
			if err == nil {
				t.Fatal("Parse accepted invalid text")
			}
			return
		}
		if err != nil {
			t.Fatalf("Parse rejected valid text: %v", err)
		}
		if got := file.Render(); !bytes.Equal(got, data) {
			t.Fatalf("round trip differs:\n got %q\nwant %q", got, data)
		}
		checkInvariants(t, data, file)
		_ = file.Condensed()
		checkRebuild(t, file)
	})
}

// FuzzAppendSection: appending any heading and body to any file either fails
// with an error (for invalid input only) or leaves the old sections intact
// and adds exactly one section holding the body lines.
func FuzzAppendSection(f *testing.F) {
	addSeeds(f, func(data []byte) {
		f.Add(data, "2026-01-01 — new", "text\n## sneaky heading\n```\n")
	})
	f.Add([]byte("## a\n```\n"), "b", "~~~\n## x")
	f.Add([]byte(""), "Recent", "")
	f.Add([]byte("## a"), "b\nc", "x\r## y")
	f.Fuzz(func(t *testing.T, data []byte, heading, body string) {
		got, err := AppendSection(data, heading, body)
		valid := validText(string(data)) && validText(heading) && validText(body) &&
			!strings.ContainsAny(heading, "\r\n") && strings.TrimSpace(heading) != "" &&
			kindOf(heading) == KindSection
		if !valid {
			if err == nil {
				t.Fatalf("AppendSection accepted invalid input (heading %q)", heading)
			}
			return
		}
		if err != nil {
			t.Fatalf("AppendSection rejected valid input: %v", err)
		}
		checkAppended(t, data, got, heading, body)
	})
}

// FuzzAddPinned: pinning any one-line fact keeps every section and adds the
// fact, or reports it already present without changing anything.
func FuzzAddPinned(f *testing.F) {
	addSeeds(f, func(data []byte) { f.Add(data, "📌 a new durable fact") })
	f.Add([]byte("```\n"), "- x")
	f.Fuzz(func(t *testing.T, data []byte, fact string) {
		got, ok, err := AddPinned(data, fact)
		if err != nil {
			return // the fuzzer finds many invalid facts; errors are checked in TestAddPinned
		}
		old, perr := Parse(data)
		if perr != nil {
			t.Fatalf("AddPinned accepted an unparsable file: %v", perr)
		}
		if !ok {
			if !bytes.Equal(got, data) {
				t.Fatal("refused duplicate but changed the file")
			}
			if !containsAll(old.Pinned(), []string{fact}) {
				t.Fatalf("refused %q, which is not pinned in %q", fact, old.Pinned())
			}
			return
		}
		nf, err := Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		if !containsAll(nf.Pinned(), append(old.Pinned(), fact)) {
			t.Fatalf("pinned %q -> %q after adding %q", old.Pinned(), nf.Pinned(), fact)
		}
		if len(nf.Recent()) != len(old.Recent()) {
			t.Fatalf("recent sections %d -> %d", len(old.Recent()), len(nf.Recent()))
		}
		for i, s := range old.Recent() {
			if n := nf.Recent()[i]; n.Raw != s.Raw && !(i == len(old.Recent())-1 && strings.HasPrefix(n.Raw, s.Raw)) {
				t.Fatalf("recent section %d changed: %q -> %q", i, s.Raw, n.Raw)
			}
		}
	})
}
