// Package mdhtml renders memory markdown to HTML for the dashboard.
//
// Memory text is untrusted (an agent may have pasted a web page), so the
// renderer never passes input through: every piece of text is HTML-escaped
// as it is written, the only markup is what the renderer itself emits, and
// link targets are limited to http, https and mailto. It covers what
// memory files use: headings, paragraphs (a line break is kept), lists and
// task lists, block quotes, fenced code, tables, rules, and inline code,
// bold, italic and links. Every source line gets an anchor (id "L<n>") so
// search hits can link to the line they start on.
package mdhtml

import (
	"html"
	"html/template"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/mdfence"
)

// Line is one numbered line of a file, without its line ending.
type Line struct {
	N    int
	Text string
}

// Options says what to mark: the lines of a search hit and the query's
// terms.
type Options struct {
	From, To int      // lines to mark as the hit (0 = none)
	Terms    []string // lowercased query terms, marked where a word starts with one
}

// Hit reports whether lines a to b overlap the hit.
func (o Options) Hit(a, b int) bool { return o.From > 0 && a <= o.To && b >= o.From }

// Lines numbers the lines of text starting at first.
func Lines(text string, first int) []Line {
	var out []Line
	n := first
	for text != "" {
		i := strings.IndexByte(text, '\n')
		line := text
		if i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		out = append(out, Line{N: n, Text: strings.TrimSuffix(line, "\r")})
		n++
	}
	return out
}

// Blocks renders text, whose first line is line first of its file, as
// HTML blocks.
func Blocks(text string, first int, o Options) template.HTML {
	return renderBlocks(Lines(text, first), o)
}

// Inline renders one line of inline markdown (a heading's text).
func Inline(s string, o Options) template.HTML {
	var b strings.Builder
	renderInline(&b, s, o, 0)
	return template.HTML(b.String())
}

// Text escapes s as plain text, marking the query's terms.
func Text(s string, o Options) template.HTML {
	var b strings.Builder
	writeText(&b, s, o)
	return template.HTML(b.String())
}

var (
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$`)
	hrRE       = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	listRE     = regexp.MustCompile(`^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$`)
	taskRE     = regexp.MustCompile(`^\[([ xX])\][ \t]+`)
	tableSepRE = regexp.MustCompile(`^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$`)
)

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// startsBlock reports whether a line begins a block other than a
// paragraph, which ends the paragraph before it.
func startsBlock(lines []Line, i int) bool {
	s := lines[i].Text
	if mdfence.IsOpener(s) {
		return true
	}
	t := strings.TrimLeft(s, " ")
	return headingRE.MatchString(s) || hrRE.MatchString(s) || listRE.MatchString(s) ||
		strings.HasPrefix(t, ">") || isTableStart(lines, i) || strings.HasPrefix(s, chunk.MachineCommentPrefix)
}

func isTableStart(lines []Line, i int) bool {
	return strings.HasPrefix(strings.TrimSpace(lines[i].Text), "|") && i+1 < len(lines) &&
		strings.Contains(lines[i+1].Text, "-") && tableSepRE.MatchString(lines[i+1].Text)
}

// renderBlocks renders lines as a sequence of blocks.
func renderBlocks(lines []Line, o Options) template.HTML {
	var b strings.Builder
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case isBlank(l.Text), strings.HasPrefix(l.Text, chunk.MachineCommentPrefix):
			// hivemem's bookkeeping (a session's turn keys) is not shown;
			// the raw view has it.
			anchor(&b, l.N)
			i++
		case mdfence.IsOpener(l.Text):
			i = renderFence(&b, lines, i, o)
		case headingRE.MatchString(l.Text):
			m := headingRE.FindStringSubmatch(l.Text)
			level := len(m[1])
			tag := "h" + strconv.Itoa(min(max(level, 2)+1, 6))
			b.WriteString("<" + tag + ` class="md-h md-h` + strconv.Itoa(level) + hitClass(o, l.N, l.N) + `" id="L` + strconv.Itoa(l.N) + `">`)
			renderInline(&b, m[2], o, 0)
			b.WriteString("</" + tag + ">\n")
			i++
		case hrRE.MatchString(l.Text):
			b.WriteString(`<hr class="md-hr" id="L` + strconv.Itoa(l.N) + `">` + "\n")
			i++
		case listRE.MatchString(l.Text):
			i = renderList(&b, lines, i, o)
		case strings.HasPrefix(strings.TrimLeft(l.Text, " "), ">"):
			i = renderQuote(&b, lines, i, o)
		case isTableStart(lines, i):
			i = renderTable(&b, lines, i, o)
		default:
			i = renderParagraph(&b, lines, i, o)
		}
	}
	return template.HTML(b.String())
}

func anchor(b *strings.Builder, n int) {
	b.WriteString(`<span class="ln" id="L` + strconv.Itoa(n) + `"></span>`)
}

func hitClass(o Options, a, z int) string {
	if o.Hit(a, z) {
		return " hit"
	}
	return ""
}

func renderFence(b *strings.Builder, lines []Line, i int, o Options) int {
	ch, n, _ := mdfence.Opener(lines[i].Text)
	info := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i].Text), string(ch)))
	j := i + 1
	for j < len(lines) && !mdfence.Closes(lines[j].Text, ch, n) {
		j++
	}
	last := min(j, len(lines)-1)
	b.WriteString(`<div class="md-code` + hitClass(o, lines[i].N, lines[last].N) + `">`)
	anchor(b, lines[i].N)
	if info != "" {
		b.WriteString(`<span class="md-lang">` + html.EscapeString(firstWord(info)) + `</span>`)
	}
	b.WriteString("<pre><code>")
	for k := i + 1; k < j && k < len(lines); k++ {
		anchor(b, lines[k].N)
		writeText(b, lines[k].Text, o)
		b.WriteByte('\n')
	}
	b.WriteString("</code></pre>")
	if j < len(lines) {
		anchor(b, lines[j].N)
		j++
	}
	b.WriteString("</div>\n")
	return j
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		if len(f[0]) > 30 {
			return f[0][:30]
		}
		return f[0]
	}
	return ""
}

func renderList(b *strings.Builder, lines []Line, i int, o Options) int {
	type item struct {
		first, last int // line numbers
		depth       int
		marker      string
		ordered     bool
		body        []Line
	}
	var items []item
	j := i
	for j < len(lines) {
		l := lines[j]
		if m := listRE.FindStringSubmatch(l.Text); m != nil {
			indent := strings.ReplaceAll(m[1], "\t", "    ")
			it := item{first: l.N, last: l.N, depth: min(len(indent)/2, 5), marker: m[2]}
			it.ordered = m[2][0] >= '0' && m[2][0] <= '9'
			it.body = []Line{{N: l.N, Text: m[3]}}
			items = append(items, it)
			j++
			continue
		}
		// A non-blank indented line continues the item above it.
		if !isBlank(l.Text) && (strings.HasPrefix(l.Text, "  ") || strings.HasPrefix(l.Text, "\t")) && !mdfence.IsOpener(l.Text) {
			it := &items[len(items)-1]
			it.body = append(it.body, Line{N: l.N, Text: strings.TrimSpace(l.Text)})
			it.last = l.N
			j++
			continue
		}
		break
	}
	b.WriteString(`<ul class="md-list">` + "\n")
	for _, it := range items {
		cls := "d" + strconv.Itoa(it.depth)
		text := it.body[0].Text
		pinned := strings.HasPrefix(strings.TrimSpace(text), "📌")
		if pinned {
			cls += " pin"
		}
		if it.ordered {
			cls += " ol"
		}
		cls += hitClass(o, it.first, it.last)
		b.WriteString(`<li class="` + cls + `">`)
		for k, bl := range it.body {
			if k > 0 {
				b.WriteString("<br>")
			}
			anchor(b, bl.N)
			t := bl.Text
			if k == 0 {
				if it.ordered {
					b.WriteString(`<span class="md-num">` + html.EscapeString(it.marker) + `</span> `)
				}
				if m := taskRE.FindStringSubmatch(t); m != nil {
					box := "☐"
					if m[1] != " " {
						box = "☑"
					}
					b.WriteString(`<span class="md-task">` + box + `</span> `)
					t = t[len(m[0]):]
				}
			}
			renderInline(b, t, o, 0)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
	return j
}

func renderQuote(b *strings.Builder, lines []Line, i int, o Options) int {
	j := i
	for j < len(lines) && strings.HasPrefix(strings.TrimLeft(lines[j].Text, " "), ">") {
		j++
	}
	renderLines(b, lines[i:j], o, "blockquote", "md-quote", func(s string) string {
		return strings.TrimPrefix(strings.TrimLeft(s, " ")[1:], " ")
	})
	return j
}

func renderTable(b *strings.Builder, lines []Line, i int, o Options) int {
	j := i + 2
	for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j].Text), "|") {
		j++
	}
	b.WriteString(`<div class="md-table` + hitClass(o, lines[i].N, lines[j-1].N) + `"><table>`)
	row := func(l Line, cell string) {
		b.WriteString(`<tr id="L` + strconv.Itoa(l.N) + `">`)
		for _, c := range tableCells(l.Text) {
			b.WriteString("<" + cell + ">")
			renderInline(b, c, o, 0)
			b.WriteString("</" + cell + ">")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("<thead>")
	row(lines[i], "th")
	b.WriteString("</thead><tbody>")
	for k := i + 2; k < j; k++ {
		row(lines[k], "td")
	}
	b.WriteString("</tbody></table>")
	anchor(b, lines[i+1].N)
	b.WriteString("</div>\n")
	return j
}

// tableCells splits a table row on unescaped pipes.
func tableCells(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			cur.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func renderParagraph(b *strings.Builder, lines []Line, i int, o Options) int {
	j := i + 1
	for j < len(lines) && !isBlank(lines[j].Text) && !startsBlock(lines, j) {
		j++
	}
	renderLines(b, lines[i:j], o, "p", "md-p", strings.TrimSpace)
	return j
}

// renderLines writes lines (at least one) as one element tag of class cls,
// a <br> between lines, the inline markdown of text(line) in each.
func renderLines(b *strings.Builder, lines []Line, o Options, tag, cls string, text func(string) string) {
	b.WriteString(`<` + tag + ` class="` + cls + hitClass(o, lines[0].N, lines[len(lines)-1].N) + `">`)
	for k, l := range lines {
		if k > 0 {
			b.WriteString("<br>")
		}
		anchor(b, l.N)
		renderInline(b, text(l.Text), o, 0)
	}
	b.WriteString("</" + tag + ">\n")
}

// Inline limits: deeper nesting and lines with many unmatched markers are
// rendered as plain text, so a hostile line cannot make rendering slow.
const (
	maxInlineDepth    = 6
	maxInlineAttempts = 64
	maxInlineLine     = 16 << 10
)

var (
	linkRE = regexp.MustCompile(`^\[([^\[\]\n]+)\]\(([^()\s]+)\)`)
	autoRE = regexp.MustCompile(`^https?://[^\s<>"'\x60]+[^\s<>"'\x60.,;:!?)\]]`)
)

// renderInline writes one line's inline markdown.
func renderInline(b *strings.Builder, s string, o Options, depth int) {
	if depth > maxInlineDepth || len(s) > maxInlineLine {
		writeText(b, s, o)
		return
	}
	attempts := 0
	start := 0
	flush := func(i int) {
		writeText(b, s[start:i], o)
	}
	for i := 0; i < len(s); {
		if attempts > maxInlineAttempts {
			break
		}
		c := s[i]
		switch {
		case c == '`':
			k := i
			for k < len(s) && s[k] == '`' {
				k++
			}
			run := s[i:k]
			if end := strings.Index(s[k:], run); end >= 0 {
				flush(i)
				b.WriteString(`<code>`)
				writeText(b, s[k:k+end], o)
				b.WriteString(`</code>`)
				i = k + end + len(run)
				start = i
				continue
			}
			attempts++
			i = k
			continue
		case (c == '*' || c == '_') && strings.HasPrefix(s[i:], string([]byte{c, c})):
			marker := s[i : i+2]
			if end := strings.Index(s[i+2:], marker); end > 0 && !unicode.IsSpace(rune(s[i+2])) && (c == '*' || wordBoundaryBefore(s, i)) {
				flush(i)
				b.WriteString("<strong>")
				renderInline(b, s[i+2:i+2+end], o, depth+1)
				b.WriteString("</strong>")
				i = i + 2 + end + 2
				start = i
				continue
			}
			attempts++
			i += 2
			continue
		case c == '*' || c == '_':
			if i+1 < len(s) && !unicode.IsSpace(rune(s[i+1])) && (c == '*' || wordBoundaryBefore(s, i)) {
				if end := strings.IndexByte(s[i+1:], c); end > 0 {
					close := i + 1 + end
					if c == '*' || close+1 >= len(s) || !isWordByte(s[close+1]) {
						flush(i)
						b.WriteString("<em>")
						renderInline(b, s[i+1:close], o, depth+1)
						b.WriteString("</em>")
						i = close + 1
						start = i
						continue
					}
				}
			}
			attempts++
			i++
			continue
		case c == '[':
			if m := linkRE.FindStringSubmatch(s[i:]); m != nil && len(m[1]) <= 500 && len(m[2]) <= 2000 {
				if href, ok := safeURL(m[2]); ok {
					flush(i)
					b.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">`)
					renderInline(b, m[1], o, depth+1)
					b.WriteString("</a>")
					i += len(m[0])
					start = i
					continue
				}
			}
			attempts++
		case c == 'h' && wordBoundaryBefore(s, i):
			if m := autoRE.FindString(s[i:]); m != "" {
				if href, ok := safeURL(m); ok {
					flush(i)
					b.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">`)
					writeText(b, m, o)
					b.WriteString("</a>")
					i += len(m)
					start = i
					continue
				}
			}
		}
		i++
	}
	writeText(b, s[start:], o)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func wordBoundaryBefore(s string, i int) bool { return i == 0 || !isWordByte(s[i-1]) }

// safeURL accepts absolute http, https and mailto links only; anything
// else (javascript:, data:, relative paths) stays text.
func safeURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
	case "mailto":
	default:
		return "", false
	}
	return u.String(), true
}

// writeText writes escaped text, wrapping words that start with a query
// term in <mark>.
func writeText(b *strings.Builder, s string, o Options) {
	if len(o.Terms) == 0 {
		b.WriteString(html.EscapeString(s))
		return
	}
	start := 0 // start of the pending unmarked text
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r2) {
				break
			}
			j += sz
		}
		word := strings.ToLower(s[i:j])
		for _, t := range o.Terms {
			if strings.HasPrefix(word, t) {
				b.WriteString(html.EscapeString(s[start:i]))
				b.WriteString("<mark>" + html.EscapeString(s[i:j]) + "</mark>")
				start = j
				break
			}
		}
		i = j
	}
	b.WriteString(html.EscapeString(s[start:]))
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// Snippet cuts a hit's text to about n bytes around the first line that
// has a query term (lower case, as from store.QueryTerms), on line
// boundaries where it can. It only ever cuts text at rune starts, and adds
// nothing but the "… " and " …" marks of a cut.
func Snippet(text string, terms []string, n int) (string, bool) {
	if len(text) <= n {
		return text, false
	}
	at := indexFold(text, terms)
	from := 0
	if at > n/3 {
		from = at - n/3
		if k := strings.LastIndexByte(text[:at], '\n'); k >= from-n/4 && k >= 0 {
			from = k + 1
		}
	}
	for from > 0 && from < len(text) && !utf8.RuneStart(text[from]) {
		from++
	}
	to := min(len(text), from+max(n, 0))
	for to > from && to < len(text) && !utf8.RuneStart(text[to]) {
		to--
	}
	out := text[from:to]
	if from > 0 {
		out = "… " + out
	}
	if to < len(text) {
		out += " …"
	}
	return out, true
}

// indexFold is the offset in s of the first match of any of terms (lower
// case) in s lower-cased, or -1: strings.Index(strings.ToLower(s), term),
// but as an offset into s itself, at the start of one of its runes. An
// offset into the lower-cased copy is not one into s: lower-casing can
// change a rune's length ("Ⱥ", 2 bytes, is "ⱥ", 3; an invalid byte
// becomes U+FFFD, 3 bytes).
func indexFold(s string, terms []string) int {
	var b strings.Builder
	b.Grow(len(s))
	from := make([]int, 0, len(s)) // from[k]: where in s the rune of lower[k] starts
	for i, r := range s {
		b.WriteRune(unicode.ToLower(r))
		for len(from) < b.Len() {
			from = append(from, i)
		}
	}
	lower := b.String()
	at := -1
	for _, t := range terms {
		if k := strings.Index(lower, t); t != "" && k >= 0 && (at < 0 || from[k] < at) {
			at = from[k]
		}
	}
	return at
}
