package store

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestFilterMatches(t *testing.T) {
	d := Drawer{Wing: "w", Room: "r", Agent: "a", Date: "2026-01-15"}
	undated := Drawer{Wing: "w", Room: "r", Agent: "a"}
	tests := []struct {
		f             Filter
		dated, nodate bool
	}{
		{Filter{}, true, true},
		{Filter{Wing: "w", Room: "r", Agent: "a"}, true, true},
		{Filter{Wing: "x"}, false, false},
		{Filter{Room: "x"}, false, false},
		{Filter{Agent: "x"}, false, false},
		{Filter{Since: "2026-01-15"}, true, false},
		{Filter{Since: "2026-01-16"}, false, false},
		{Filter{Until: "2026-01-15"}, true, false},
		{Filter{Until: "2026-01-14"}, false, false},
		{Filter{Since: "2026-01-01", Until: "2026-01-31"}, true, false},
	}
	for _, tt := range tests {
		if got := tt.f.Matches(d); got != tt.dated {
			t.Errorf("%+v.Matches(dated) = %v", tt.f, got)
		}
		if got := tt.f.Matches(undated); got != tt.nodate {
			t.Errorf("%+v.Matches(undated) = %v", tt.f, got)
		}
	}
}

// FuzzQueryTerms checks that whatever the input, the terms are valid UTF-8
// made of letters, digits and marks only, lowercase, distinct, and at most
// MaxQueryTerms: nothing a query language could read as syntax.
func FuzzQueryTerms(f *testing.F) {
	for _, s := range []string{"", `"`, "NEAR(a b)", "a -b", "'; DROP TABLE x; --", "heading:foo ^x", "é\u0301", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		terms := QueryTerms(q)
		if len(terms) > MaxQueryTerms {
			t.Fatalf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) || seen[term] || strings.ToLower(term) != term {
				t.Fatalf("bad term %q in %q", term, terms)
			}
			seen[term] = true
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
					t.Fatalf("term %q holds %q", term, r)
				}
			}
		}
	})
}

// TestInOrder: Get's order is the ids' — a missing id left out, a repeated
// one repeated — whatever order the drawers were read in.
func TestInOrder(t *testing.T) {
	ds := []Drawer{{ID: "c"}, {ID: "a"}, {ID: "b"}}
	var got []string
	for _, d := range InOrder([]string{"b", "x", "a", "b"}, ds) {
		got = append(got, d.ID)
	}
	if want := []string{"b", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("InOrder = %q, want %q", got, want)
	}
	if got := InOrder(nil, ds); len(got) != 0 {
		t.Errorf("InOrder of no ids = %v", got)
	}
}
