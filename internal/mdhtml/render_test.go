package mdhtml

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRenderBlocks(t *testing.T) {
	cases := []struct {
		name    string
		md      string
		opts    Options
		want    []string
		notWant []string
	}{
		{"script is text", "<script>alert(1)</script>",
			Options{}, []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script"}},
		{"event handler is text", `<img src=x onerror="alert(1)">`,
			Options{}, []string{"&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"}, []string{"<img"}},
		{"javascript link stays text", "[x](javascript:alert(1))",
			Options{}, []string{"[x](javascript:alert(1))"}, []string{"<a "}},
		{"data link stays text", "[x](data:text/html,hi)", Options{}, nil, []string{"<a "}},
		{"relative link stays text", "[x](/api/v1/settings)", Options{}, nil, []string{"<a "}},
		{"https link", `[docs](https://example.com/a?b=1&c="2")`,
			Options{}, []string{`<a href="https://example.com/a?b=1&amp;c=&#34;2&#34;" rel="noopener noreferrer nofollow" target="_blank">docs</a>`}, nil},
		{"autolink", "see https://example.com/x.", Options{}, []string{`<a href="https://example.com/x"`, "</a>."}, nil},
		{"quote in link text", `[a"b](https://x.example/)`, Options{}, []string{`>a&#34;b</a>`}, nil},
		{"inline", "**bold** and *it* and `co<de>` and _under_ score_in_word",
			Options{}, []string{"<strong>bold</strong>", "<em>it</em>", "<code>co&lt;de&gt;</code>", "<em>under</em>", "score_in_word"}, nil},
		{"heading", "# Title <b>", Options{}, []string{`<h3 class="md-h md-h1" id="L1">Title &lt;b&gt;</h3>`}, nil},
		{"fenced code", "```go\nx := \"<b>\"\n## not a heading\n```\nafter",
			Options{}, []string{`<span class="md-lang">go</span>`, "x := &#34;&lt;b&gt;&#34;", "## not a heading", `<p class="md-p"><span class="ln" id="L5"></span>after</p>`}, []string{"<h"}},
		{"unclosed fence", "```\ncode", Options{}, []string{"<pre><code>", "code"}, nil},
		{"list and tasks", "- one\n  continued\n- [x] done\n- [ ] todo\n1. first\n- 📌 pinned",
			Options{}, []string{"<br>", "continued", "☑", "☐", `<span class="md-num">1.</span>`, `class="d0 pin"`}, nil},
		{"table", "| a | b\\|c |\n|---|---|\n| <i>1</i> | 2 |",
			Options{}, []string{"<th>a</th><th>b|c</th>", "<td>&lt;i&gt;1&lt;/i&gt;</td>", `<tr id="L3">`}, nil},
		{"quote and rule", "> quoted <b>\n---", Options{}, []string{`<blockquote class="md-quote">`, "quoted &lt;b&gt;", `<hr class="md-hr" id="L2">`}, nil},
		{"line anchors", "a\n\nb", Options{}, []string{`id="L1"`, `id="L2"`, `id="L3"`}, nil},
		{"hit lines", "a\n\nb\nc", Options{From: 3, To: 4}, []string{`<p class="md-p hit">`}, []string{`<p class="md-p hit"><span class="ln" id="L1">`}},
		{"terms marked", "Testing the tests, not <contest>", Options{Terms: []string{"test"}},
			[]string{"<mark>Testing</mark> the <mark>tests</mark>", "&lt;contest&gt;"}, []string{"<mark>contest"}},
		{"terms never inside markup", "[test](https://test.example/test)", Options{Terms: []string{"test"}},
			[]string{`href="https://test.example/test"`, "><mark>test</mark></a>"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(Blocks(c.md, 1, c.opts))
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("want %q in\n%s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("do not want %q in\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderHostileInputIsFast(t *testing.T) {
	cases := map[string]string{
		"stars":     strings.Repeat("*", 200000),
		"underline": strings.Repeat("_a", 100000),
		"brackets":  strings.Repeat("[", 100000) + strings.Repeat("](", 50000),
		"ticks":     strings.Repeat("`", 100000),
		"mixed":     strings.Repeat("**a *b `c [d](e", 20000),
		"nesting":   strings.Repeat("**", 5000) + "x" + strings.Repeat("**", 5000),
	}
	for name, md := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out := string(Blocks(md+"\n"+md, 1, Options{Terms: []string{"a"}}))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if strings.Contains(out, "<a ") && name != "mixed" {
				t.Errorf("unexpected link")
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler words here\n", 60) + "the needle is here\n" + strings.Repeat("more text after\n", 60)
	cases := []struct {
		name, text string
		terms      []string
		n          int
		want       string
		cut        bool
	}{
		{"short", "all of it", []string{"it"}, 100, "all of it", false},
		{"around the term", long, []string{"needle"}, 200, "the needle is here", true},
		{"no term: start", long, []string{"absent"}, 100, "filler words here", true},
		// Lower-casing "Ⱥ" (2 bytes) gives "ⱥ" (3 bytes): an offset in the
		// lower-cased text lies past the term in the original.
		{"case folding longer", strings.Repeat("Ⱥ", 400) + " zebracorn marker", []string{"zebracorn"}, 600, "zebracorn marker", true},
		{"term folds", strings.Repeat("Ⱥ", 400) + " ZebraCorn marker" + strings.Repeat(" x", 400), []string{"zebracorn"}, 200, "ZebraCorn marker", true},
		{"term with folding rune", strings.Repeat("x ", 400) + "ȺB" + strings.Repeat(" y", 400), []string{"ⱥb"}, 100, "ȺB", true},
		// "K" (Kelvin sign, 3 bytes) lower-cases to "k" (1 byte).
		{"case folding shorter", strings.Repeat("\u212a", 400) + " needle" + strings.Repeat(" z", 400), []string{"needle"}, 100, "needle", true},
		{"invalid utf-8", strings.Repeat("\xff", 400) + " needle" + strings.Repeat(" z", 400), []string{"needle"}, 100, "needle", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cut := Snippet(c.text, c.terms, c.n)
			if !strings.Contains(got, c.want) || cut != c.cut || len(got) > c.n+10 {
				t.Errorf("snippet = %q (cut %v)", got, cut)
			}
		})
	}
}

// FuzzSnippet: Snippet never panics, keeps valid UTF-8 valid, and adds
// nothing to its input but the marks of a cut.
func FuzzSnippet(f *testing.F) {
	f.Add(strings.Repeat("Ⱥ", 400)+" zebracorn marker", "zebracorn", 600)
	f.Add(strings.Repeat("\u212a", 300)+" needle\nline", "needle", 100)
	f.Add("short", "s", 10)
	f.Add("a\nb\nc\n"+strings.Repeat("é", 50), "é", 7)
	f.Add("\xff\xfe\x80abc", "abc", 1)
	f.Fuzz(func(t *testing.T, text, term string, n int) {
		n = max(n%2048, -n%2048) // 0 to 2047
		out, cut := Snippet(text, strings.Fields(strings.ToLower(term)), n)
		if !cut {
			if out != text || len(text) > n {
				t.Fatalf("uncut Snippet(%q, %d) = %q", text, n, out)
			}
			return
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("snippet of valid UTF-8 is not: %q", out)
		}
		mid := strings.TrimSuffix(strings.TrimPrefix(out, "… "), " …")
		if !strings.Contains(text, mid) {
			t.Fatalf("Snippet(%q, %d) = %q: %q is not part of the text", text, n, out, mid)
		}
		if len(mid) > n {
			t.Fatalf("Snippet(%q, %d) = %q: longer than %d bytes", text, n, out, n)
		}
	})
}
