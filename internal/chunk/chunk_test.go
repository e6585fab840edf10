package chunk

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/memfile"
)

func parse(t *testing.T, s string) *memfile.File {
	t.Helper()
	f, err := memfile.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEstimateTokens(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"hello, world!", 4},
		{"authentication", 3},
		{"sha 657e85d82d3c", 5},
		{"日本語", 3},
		{"café", 1},
		{"a\xffb", 3},
	}
	for _, c := range cases {
		if got := EstimateTokens(c.in); got != c.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestFileRoomsAndPlaceholders(t *testing.T) {
	f := parse(t, "# Memory — A (a)\n\n## 📌 Durable facts (pinned — never condensed)\n- fact one\n## 🗜 Condensed history\n_(none yet)_\n## Recent\n## 2026-11-29 — note\nbody line\n\n## empty\n")
	got := File(f, 0)
	want := []Chunk{
		{Heading: "📌 Durable facts (pinned — never condensed)", Text: "- fact one", LineStart: 3, LineEnd: 4, Room: RoomPinned},
		{Heading: "2026-11-29 — note", Text: "body line", LineStart: 8, LineEnd: 9, Room: RoomRecent, Date: "2026-11-29"},
		{Heading: "empty", LineStart: 11, LineEnd: 11, Room: RoomRecent},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("File =\n%+v\nwant\n%+v", got, want)
	}
}

// TestHeaderWithContent: a header with more than a title is a drawer; a
// title alone, after a byte order mark or not, is none, and the BOM is in
// no drawer. A file with CR-only line endings is all header to the parser:
// its words are still a drawer.
func TestHeaderWithContent(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		header     string // the header drawer's text; "" for none
	}{
		{"role under the title", "# Memory — A (a)\nRole: release manager.\n\n## s\nx\n", "# Memory — A (a)\nRole: release manager.\n"},
		{"title only", "# Memory — A (a)\n\n## s\nx\n", ""},
		{"BOM then title", "\ufeff# Memory — A (a)\n\n## s\nx\n", ""},
		{"BOM then heading", "\ufeff## 2026-11-01 — s\nx\n", ""},
		{"BOM then role", "\ufeffRole: release manager.\n## s\nx\n", "Role: release manager.\n"},
		{"CR-only line endings", "# Memory\r## 2026-11-01 — cr\rlonecrdingo notes\r", "# Memory\r## 2026-11-01 — cr\rlonecrdingo notes\r"},
		{"CR-only title", "# Memory — A (a)\r\r", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var header []Chunk
			for _, c := range File(parse(t, tc.file), 0) {
				if strings.Contains(c.EmbedText(), "\ufeff") {
					t.Errorf("a drawer holds the byte order mark: %+v", c)
				}
				if c.Room == RoomHeader {
					header = append(header, c)
				}
			}
			switch {
			case tc.header == "" && len(header) > 0:
				t.Errorf("header drawers %+v, want none", header)
			case tc.header != "" && (len(header) != 1 || strings.TrimSpace(header[0].Text) != strings.TrimSpace(tc.header) || header[0].LineStart != 1):
				t.Errorf("header drawers %+v, want one of %q from line 1", header, tc.header)
			}
		})
	}
}

func longSection(r *rand.Rand, paras int) string {
	words := []string{"deploy", "the", "service", "migration", "failed", "because", "of", "a", "timeout", "in", "handler", "retry", "queue", "config", "postgres", "index"}
	var b strings.Builder
	for p := 0; p < paras; p++ {
		lines := 1 + r.Intn(6)
		for l := 0; l < lines; l++ {
			n := 3 + r.Intn(25)
			for w := 0; w < n; w++ {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.Intn(len(words))])
			}
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSplitInvariants checks, over random long sections, that every piece
// fits the budget with its heading, is an exact run of the file's lines,
// and that together the pieces cover every word of the section in order.
func TestSplitInvariants(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		body := longSection(r, 1+r.Intn(20))
		if i%7 == 0 {
			body += strings.Repeat("verylongline ", 400) + "\n"
		}
		if i%11 == 0 {
			body += strings.Repeat("x", 3000) + "\n"
		}
		file := "# Memory\n\n## 2026-01-02 — heading words here\n" + body
		lines := strings.Split(file, "\n")
		chunks := File(parse(t, file), 100)
		var words []string
		for _, c := range chunks {
			if tok := EstimateTokens(c.EmbedText()); tok > 100 {
				t.Fatalf("case %d: chunk of %d tokens > 100: %q", i, tok, c.EmbedText())
			}
			if c.Heading != "2026-01-02 — heading words here" {
				t.Fatalf("piece lost its heading: %+v", c)
			}
			span := strings.Join(lines[c.LineStart-1:c.LineEnd], "\n")
			if !strings.Contains(span, c.Text) {
				t.Fatalf("case %d: chunk text is not from lines %d-%d: %q", i, c.LineStart, c.LineEnd, c.Text)
			}
			words = append(words, strings.Fields(c.Text)...)
		}
		if strings.Join(words, "") != strings.Join(strings.Fields(body), "") {
			t.Fatalf("case %d: pieces do not cover the section's words in order", i)
		}
	}
}

// TestLongWordPiecesFitTheBudget: a word longer than the budget is cut at
// rune boundaries so that every piece plus its heading fits, though the
// estimate is not additive (one digit re-prices the whole run of letters
// before it), and the pieces give back the word.
func TestLongWordPiecesFitTheBudget(t *testing.T) {
	for _, word := range []string{
		strings.Repeat("a", 1000) + "1" + strings.Repeat("b", 1000),
		strings.Repeat("a", 2000) + "9",
		strings.Repeat("7", 3000),
		strings.Repeat("x1", 1500),
		strings.Repeat("日本abc", 400),
		strings.Repeat("é", 1500) + "0" + strings.Repeat(",", 300),
	} {
		file := "# Memory\n\n## 2026-01-02 — a long identifier\n" + word + "\n"
		var got strings.Builder
		for _, c := range File(parse(t, file), DefaultMaxTokens) {
			if tok := EstimateTokens(c.EmbedText()); tok > DefaultMaxTokens {
				t.Errorf("piece of %d estimated tokens with its heading, over the %d budget: %.40q…", tok, DefaultMaxTokens, c.Text)
			}
			got.WriteString(c.Text)
		}
		if got.String() != word {
			t.Errorf("the pieces of a %d-byte word do not give it back", len(word))
		}
	}
}

// TestAppendStability: appending sections never changes earlier chunks.
func TestAppendStability(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	file := "# Memory — A (a)\n"
	var prev []Chunk
	for i := 0; i < 30; i++ {
		file += fmt.Sprintf("\n## 2026-11-%02d — s%d\n", i%28+1, i) + longSection(r, 1+r.Intn(8))
		cur := File(parse(t, file), 0)
		if len(cur) < len(prev) || len(prev) > 0 && !reflect.DeepEqual(cur[:len(prev)], prev) {
			t.Fatalf("append %d moved earlier chunk boundaries", i)
		}
		prev = cur
	}
}

func TestEmbedTextLeavesOutAHeadingThatRepeatsTheText(t *testing.T) {
	long := "I'm looking for some healthy meal ideas for my busy weekdays. By the way, I had Domino's Pizza three times last week!"
	cases := []struct {
		name, heading, text, want string
	}{
		{"exchange heading: the first turn's opening, cut",
			"2023-05-22 01:26 — I'm looking for some healthy meal ideas for my busy weekday…",
			"- **user**: " + long,
			"2023-05-22 01:26\n- **user**: " + long},
		{"exchange heading: the whole short turn",
			"2026-11-29 14:03 — fix the login test",
			"- **user**: fix the login test\n- **assistant**: Fixed.",
			"2026-11-29 14:03\n- **user**: fix the login test\n- **assistant**: Fixed."},
		{"a turn of several lines starts after its role",
			"2026-11-29 14:03 — first line of a long turn",
			"- **user**:\nfirst line\nof a long turn\nand more",
			"2026-11-29 14:03\n- **user**:\nfirst line\nof a long turn\nand more"},
		{"a topic the text does not start with stays",
			"2022-01-21 — session 1 (7:31 pm on 21 January, 2022)",
			"[D1:1] Nate: Hey Joanna! Long time no see!",
			"2022-01-21 — session 1 (7:31 pm on 21 January, 2022)\n[D1:1] Nate: Hey Joanna! Long time no see!"},
		{"a later piece of a split section keeps the whole heading",
			"2026-11-29 14:03 — fix the login test",
			"the third paragraph of this long section, which says fix the login test only near its end",
			"2026-11-29 14:03 — fix the login test\nthe third paragraph of this long section, which says fix the login test only near its end"},
		{"a continued exchange",
			"2026-11-29 14:03 — (continued)",
			"- **assistant**: Done.",
			"2026-11-29 14:03 — (continued)\n- **assistant**: Done."},
		{"a short topic inside a word of the text stays",
			"2026-11-29 — cat", "the location of the cat", "2026-11-29 — cat\nthe location of the cat"},
		{"a topic that only starts a longer word stays",
			"2026-11-29 — deploy", "deployment went fine", "2026-11-29 — deploy\ndeployment went fine"},
		{"a topic followed by punctuation",
			"2026-11-29 — deploy", "deploy: done", "2026-11-29\ndeploy: done"},
		{"no date part", "Notes", "Notes on the build", "Notes\nNotes on the build"},
		{"an empty topic", "2026-11-29 — ", "- **user**: hi", "2026-11-29 — \n- **user**: hi"},
		{"no text", "2026-11-29 — hi", "", "2026-11-29 — hi"},
		{"no heading", "", "- **user**: hi", "- **user**: hi"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (Chunk{Heading: c.heading, Text: c.text}).EmbedText(); got != c.want {
				t.Fatalf("EmbedText = %q, want %q", got, c.want)
			}
		})
	}
}

// Marking a section superseded changes its drawers' metadata, never their
// text (and so never the id an agent cites): before, the "> superseded
// by:" line became part of the text.
func TestSupersededMarkLeavesTheTextAsItWas(t *testing.T) {
	before := "# Memory\n\n## 2026-11-02 — deploy command\nDeploy with `make deploy`.\nFrom the repo root.\n"
	marked, _, err := memfile.Supersede([]byte(before), "deploy command", "2026-12-01 — deploy command", "Deploy with `make release`.")
	if err != nil {
		t.Fatal(err)
	}
	chunks := func(data string) []Chunk {
		f, err := memfile.Parse([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return File(f, 0)
	}
	a, b := chunks(before), chunks(string(marked))
	if len(a) != 1 || len(b) != 2 {
		t.Fatalf("chunks: %d before, %d after; want 1 and 2", len(a), len(b))
	}
	if a[0].EmbedText() != b[0].EmbedText() || b[0].SupersededBy != "2026-12-01 — deploy command" {
		t.Errorf("marked chunk = %+v; want the text %q, superseded", b[0], a[0].Text)
	}
	if b[0].LineStart != a[0].LineStart || b[0].LineEnd != a[0].LineEnd+1 {
		t.Errorf("marked chunk lines %d-%d; want %d-%d", b[0].LineStart, b[0].LineEnd, a[0].LineStart, a[0].LineEnd+1)
	}
}
