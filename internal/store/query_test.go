package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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

// TestAnalyzeChecksDatesAndExtractsTerms: the one analysis both the palace
// and the backends call says which bound is wrong and gives the words.
func TestAnalyzeChecksDatesAndExtractsTerms(t *testing.T) {
	for _, c := range []struct {
		name, text string
		f          Filter
		terms      []string
		err        string
	}{
		{"words", "The Login test, flaky?", Filter{Wing: "w"}, []string{"login", "test", "flaky"}, ""},
		{"no words", "*()", Filter{}, nil, ""},
		{"bad since", "x", Filter{Since: "2024/01/01"}, nil, `since date "2024/01/01" is not a day (want YYYY-MM-DD)`},
		{"impossible until", "x", Filter{Until: "2024-13-45"}, nil, `until date "2024-13-45" is not a day (want YYYY-MM-DD)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := Analyze(c.text, c.f)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Analyze = %+v, %v; want an error containing %q", q, err, c.err)
				}
				return
			}
			if err != nil || q.Text != c.text || q.Filter != c.f || !slices.Equal(q.Terms, c.terms) {
				t.Errorf("Analyze = %+v, %v; want terms %q", q, err, c.terms)
			}
		})
	}
}
