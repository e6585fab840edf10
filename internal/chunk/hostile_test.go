package chunk

// Chunking of hostile sections — CJK without spaces,
// emoji, combining marks, NBSP and ideographic spaces, tabs, CRLF, lines
// made only of punctuation, and thousands of tiny sections — must keep
// every piece within the budget (with its heading), an exact slice of the
// section's lines, covering every word in order, with line ranges inside
// the section.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSplitHostileText(t *testing.T) {
	atoms := []string{
		"deploy", "の", "日本語のテキスト", "中文没有空格的句子很长很长", "한국어", "🎉", "👩‍💻", "e\u0301", "ﬁ",
		"\u00a0", "\u3000", "\t", " ", " ", " ", "...", "—", "x", "1234567890", "a-b_c", "`code`", "**bold**",
		strings.Repeat("z", 80), strings.Repeat("日", 300), strings.Repeat("9", 100),
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for i := range 300 {
		budget := 20 + rng.IntN(200)
		var body strings.Builder
		eol := "\n"
		if i%3 == 0 {
			eol = "\r\n"
		}
		for range 1 + rng.IntN(12) {
			for range rng.IntN(60) {
				body.WriteString(atoms[rng.IntN(len(atoms))])
			}
			body.WriteString(eol)
			if rng.IntN(4) == 0 {
				body.WriteString(eol)
			}
		}
		heading := "2026-01-02 — heading " + atoms[rng.IntN(len(atoms))]
		file := "# Memory" + eol + eol + "## " + heading + eol + body.String() + "## next" + eol + "after" + eol
		f := parse(t, file)
		chunks := File(f, budget)
		sec := f.Sections[0]
		var words []string
		for _, c := range chunks {
			if c.Heading != heading {
				continue
			}
			// A piece cut out of one long word may exceed the budget.
			oneWord := !strings.ContainsAny(strings.TrimSpace(c.Text), " \t\n")
			if tok := EstimateTokens(c.EmbedText()); tok > budget && EstimateTokens(heading) < budget/2 && !oneWord {
				t.Fatalf("case %d: piece of %d tokens over the budget %d: %q", i, tok, budget, c.EmbedText())
			}
			if c.LineStart < sec.StartLine || c.LineEnd > sec.EndLine || c.LineStart > c.LineEnd {
				t.Fatalf("case %d: piece lines %d-%d outside the section %d-%d", i, c.LineStart, c.LineEnd, sec.StartLine, sec.EndLine)
			}
			lines := strings.SplitAfter(file, "\n")
			span := strings.Join(lines[c.LineStart-1:c.LineEnd], "")
			if !strings.Contains(span, c.Text) {
				t.Fatalf("case %d: piece is not a slice of lines %d-%d: %q", i, c.LineStart, c.LineEnd, c.Text)
			}
			if strings.HasSuffix(c.Text, "\r") || strings.HasSuffix(c.Text, "\n") {
				t.Fatalf("case %d: piece ends with a line ending: %q", i, c.Text)
			}
			words = append(words, strings.Fields(c.Text)...)
		}
		if got, want := strings.Join(words, ""), strings.Join(strings.Fields(sec.Body()), ""); got != want {
			t.Fatalf("case %d (budget %d): pieces do not cover the section's words in order\n got %q\nwant %q", i, budget, got, want)
		}
	}
}

// TestThousandsOfTinySectionsChunkLinearly: chunking stays linear and exact with
// 20 000 sections, and appending one section changes only the end.
func TestThousandsOfTinySectionsChunkLinearly(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory\n\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "## s%d\nw%d\n", i, i)
	}
	chunks := File(parse(t, b.String()), 0)
	if len(chunks) != 20000 {
		t.Fatalf("%d chunks, want 20000", len(chunks))
	}
	for i, c := range chunks {
		if c.Heading != fmt.Sprintf("s%d", i) || c.Text != fmt.Sprintf("w%d", i) || c.LineStart != 3+2*i || c.LineEnd != 4+2*i {
			t.Fatalf("chunk %d = %+v", i, c)
		}
	}
	b.WriteString("## last\nlastword\n")
	more := File(parse(t, b.String()), 0)
	if len(more) != 20001 || more[20000].Text != "lastword" {
		t.Fatalf("after an append: %d chunks, last %+v", len(more), more[len(more)-1])
	}
}
