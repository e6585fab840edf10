package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t\n", nil},
		{`"*()^:-'`, nil},
		{"Deploy the ROLLBACK!", []string{"deploy", "rollback"}},
		{"the of and", []string{"the", "of", "and"}}, // only stopwords: kept
		{"the the THE", []string{"the"}},
		{"run, Run; RUN", []string{"run"}},
		{`heading:foo NEAR(a b) -x ^y "z"`, []string{"heading", "foo", "near", "b", "x", "y", "z"}},
		{"'; DROP TABLE drawers; --", []string{"drop", "table", "drawers"}},
		{"café Ünïcode ПРИВЕТ", []string{"café", "ünïcode", "привет"}},
		{"e\u0301té", []string{"e\u0301té"}}, // a combining mark stays inside its word
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
		{"a\x00deploy", []string{"deploy"}},
		{"bad\xffutf8", []string{"bad", "utf8"}},
		{"x1 2026-01-02 v2.3", []string{"x1", "2026", "01", "02", "v2", "3"}},
		{"don't", []string{"don", "t"}},
	}
	for _, tt := range tests {
		if got := QueryTerms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryTermsBounds(t *testing.T) {
	var sb strings.Builder
	for i := range 100 {
		fmt.Fprintf(&sb, "w%d ", i)
	}
	got := QueryTerms(sb.String())
	if len(got) != MaxQueryTerms || got[0] != "w0" || got[MaxQueryTerms-1] != fmt.Sprintf("w%d", MaxQueryTerms-1) {
		t.Errorf("QueryTerms of 100 words = %d terms %q..., want the first %d", len(got), got[:min(3, len(got))], MaxQueryTerms)
	}
	// A long hostile string: every term is valid UTF-8 made of letters,
	// digits and marks only.
	hostile := strings.Repeat("\"a\x00é*(NEAR)\xff -", 2000)
	for _, term := range QueryTerms(hostile) {
		if !utf8.ValidString(term) || strings.ContainsAny(term, "\"*()-\x00 ") {
			t.Errorf("QueryTerms let through %q", term)
		}
	}
}

func TestValidDate(t *testing.T) {
	for _, ok := range []string{"", "2026-01-02", "2024-02-29", "1999-12-31"} {
		if err := ValidDate(ok); err != nil {
			t.Errorf("ValidDate(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"2026-1-2", "2026-02-30", "2025-02-29", "26-01-02", "2026-01-02T00:00:00Z", "yesterday", "2026/01/02", " 2026-01-02"} {
		if err := ValidDate(bad); err == nil {
			t.Errorf("ValidDate(%q) accepted", bad)
		}
	}
	if err := (Filter{Since: "2026-01-01", Until: "2026-13-01"}).Validate(); err == nil {
		t.Errorf("Filter.Validate accepted a bad until")
	}
}

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
