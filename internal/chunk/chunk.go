// Package chunk cuts a parsed memory file into drawers: one per section,
// with long sections split at paragraph, then line, then word boundaries so
// that every piece plus its heading fits the embedder's window. Boundaries
// depend only on the section itself, so appending a section never changes
// the chunks of the sections before it.
package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/memfile"
)

// DefaultMaxTokens leaves room under MiniLM's 256-piece window for [CLS],
// [SEP] and the error of the estimate.
const DefaultMaxTokens = 200

// Rooms assigned to chunks by where they stand in the file.
const (
	RoomHeader    = "header"
	RoomPinned    = "pinned"
	RoomCondensed = "condensed"
	RoomRecent    = "recent"
	RoomArchive   = "archive"
	RoomSession   = "session" // an imported conversation (hive/agents/<id>/sessions/)
)

// MachineCommentPrefix starts the bookkeeping lines hivemem writes into
// files it renders (an imported session's turn keys). Such lines at the end
// of a section, or in the header, are not content: they are left out of
// drawers.
const MachineCommentPrefix = "<!-- hivemem:"

func isMachineComment(s string) bool { return strings.HasPrefix(s, MachineCommentPrefix) }

// Chunk is one drawer's worth of a file.
type Chunk struct {
	Heading   string
	Text      string // exact bytes from the file (heading line excluded)
	LineStart int    // 1-based, inclusive
	LineEnd   int
	Room      string
	Date      string
	// SupersededBy is the heading of the section that replaces this
	// chunk's (memfile.Section.SupersededBy), "" for a current one.
	SupersededBy string
}

// EmbedText is what the embedder and the content hash see: the heading
// gives every piece of a split section its context — all of it but the
// words that only repeat the start of the text (see contextHeading).
func (c Chunk) EmbedText() string {
	if c.Heading == "" {
		return c.Text
	}
	if c.Text == "" {
		return c.Heading
	}
	return contextHeading(c.Heading, c.Text) + "\n" + c.Text
}

// headingTopicSep parts a dated heading's date from its topic, as the
// session importer writes it ("2026-11-29 14:03 — fix the login test").
const headingTopicSep = " — "

// contextHeading is the part of heading that adds to text. An imported
// exchange's heading is its date and the opening words of its first turn,
// which the text starts with again: embedded twice, the opening would
// outweigh the rest of the turn (where an aside such as "by the way, I
// bought …" often is). When the words after the first " — " (a trailing
// "…" of a cut topic aside) start the text, after at most a short label
// (a turn's "- **user**:"), only the part before them is kept. Any other
// heading, and the heading of a later piece of a split section (whose
// text starts elsewhere), stays whole.
func contextHeading(heading, text string) string {
	before, topic, ok := strings.Cut(heading, headingTopicSep)
	if !ok {
		return heading
	}
	cut := strings.HasSuffix(topic, "…") // its last word may be cut short
	want := strings.Join(strings.Fields(strings.TrimSuffix(topic, "…")), " ")
	if want == "" {
		return heading
	}
	// Compared word by word: a long turn starts on the line after its label.
	head := strings.Join(strings.Fields(text[:min(len(text), len(topic)+2*maxLabelBytes)]), " ")
	i := strings.Index(head, want)
	switch {
	case i < 0 || i > maxLabelBytes:
		return heading
	case i > 0 && head[i-1] != ' ': // inside a word
		return heading
	case !cut && i+len(want) < len(head) && isWordByte(head[i+len(want)]): // the start of a longer word
		return heading
	}
	return before
}

// isWordByte reports whether b continues a word: a letter, a digit, or
// part of a multi-byte character.
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b >= 0x80
}

// maxLabelBytes is how far into a text its topic may start and still be
// its opening: past a role label such as "- **user (subagent)**: ".
const maxLabelBytes = 32

// File chunks a whole parsed file. maxTokens <= 0 means DefaultMaxTokens.
func File(f *memfile.File, maxTokens int) []Chunk {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var out []Chunk
	// A byte order mark is not text: it stays out of the header's drawer.
	if h := strings.TrimPrefix(f.Header, bom); headerHasContent(h) {
		out = append(out, split("", h, 1, maxTokens, RoomHeader, "")...)
	}
	for _, s := range f.Sections {
		room := RoomRecent
		switch s.Kind {
		case memfile.KindPinned:
			room = RoomPinned
		case memfile.KindCondensed:
			room = RoomCondensed
		case memfile.KindRecent:
			// The "## Recent" marker: only its body (rarely any) is content.
			if memfile.IsPlaceholderBody(s.Body()) {
				continue
			}
		}
		body, first := s.Body(), s.StartLine+1
		if s.Kind != memfile.KindSection && memfile.IsPlaceholderBody(body) {
			continue
		}
		if s.SupersededBy != "" {
			// The mark is metadata (SupersededBy): the text, and so the
			// drawer id an agent cites, stays as it was.
			var skipped int
			body, skipped = s.SupersededNote()
			first += skipped
		}
		pieces := split(s.Heading, body, first, maxTokens, room, s.Date)
		if len(pieces) > 0 {
			// The first piece's range starts at the heading, so a hit opens the section.
			pieces[0].LineStart = s.StartLine
		}
		for i := range pieces {
			pieces[i].SupersededBy = s.SupersededBy
		}
		out = append(out, pieces...)
	}
	return out
}

// bom is the UTF-8 byte order mark some editors put at the start of a file
// (memfile keeps it in the header).
const bom = "\uFEFF"

// headerHasContent skips the usual title-only header, which would only add
// noise to search. A lone CR ends a line too: a file with old Mac line
// endings is all header to the parser (a "## " heading must start a "\n"
// line), and its title must not hide the rest of it.
func headerHasContent(h string) bool {
	for _, l := range strings.FieldsFunc(h, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "# ") && !isMachineComment(l) {
			return true
		}
	}
	return false
}

type line struct {
	text string // without line ending
	raw  string // with line ending
	num  int
}

func lines(body string, first int) []line {
	var out []line
	for i := 0; body != ""; i++ {
		j := strings.IndexByte(body, '\n')
		raw := body
		if j >= 0 {
			raw = body[:j+1]
		}
		body = body[len(raw):]
		out = append(out, line{text: strings.TrimRight(raw, "\r\n"), raw: raw, num: first + i})
	}
	return out
}

func split(heading, body string, firstLine, maxTokens int, room, date string) []Chunk {
	ls := lines(body, firstLine)
	// Trim blank lines at both ends: they carry nothing.
	for len(ls) > 0 && strings.TrimSpace(ls[0].text) == "" {
		ls = ls[1:]
	}
	for len(ls) > 0 && (strings.TrimSpace(ls[len(ls)-1].text) == "" || isMachineComment(ls[len(ls)-1].text)) {
		ls = ls[:len(ls)-1]
	}
	mk := func(part []line) Chunk {
		var b strings.Builder
		for i, l := range part {
			if i == len(part)-1 {
				b.WriteString(l.text)
			} else {
				b.WriteString(l.raw)
			}
		}
		return Chunk{Heading: heading, Text: b.String(), LineStart: part[0].num, LineEnd: part[len(part)-1].num, Room: room, Date: date}
	}
	if len(ls) == 0 {
		if heading == "" {
			return nil
		}
		return []Chunk{{Heading: heading, LineStart: firstLine - 1, LineEnd: firstLine - 1, Room: room, Date: date}}
	}
	budget := maxTokens - EstimateTokens(heading)
	if budget < maxTokens/4 {
		budget = maxTokens / 4
	}
	total := 0
	for _, l := range ls {
		total += EstimateTokens(l.text)
	}
	if total <= budget {
		return []Chunk{mk(ls)}
	}

	var out []Chunk
	var cur []line
	curTok := 0
	flush := func() {
		for len(cur) > 0 && strings.TrimSpace(cur[len(cur)-1].text) == "" {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			out = append(out, mk(cur))
		}
		cur, curTok = nil, 0
	}
	add := func(group []line, tok int) {
		if curTok+tok > budget {
			flush()
		}
		if len(cur) == 0 {
			for len(group) > 0 && strings.TrimSpace(group[0].text) == "" {
				group = group[1:]
			}
		}
		cur = append(cur, group...)
		curTok += tok
	}
	for _, para := range paragraphs(ls) {
		ptok := 0
		for _, l := range para {
			ptok += EstimateTokens(l.text)
		}
		if ptok <= budget {
			add(para, ptok)
			continue
		}
		// The paragraph alone is too big: pack its lines.
		for _, l := range para {
			ltok := EstimateTokens(l.text)
			if ltok <= budget {
				add([]line{l}, ltok)
				continue
			}
			flush()
			for _, piece := range splitWords(l.text, budget) {
				out = append(out, Chunk{Heading: heading, Text: piece, LineStart: l.num, LineEnd: l.num, Room: room, Date: date})
			}
		}
	}
	flush()
	return out
}

// paragraphs groups lines into runs separated by blank lines; each blank
// line is attached to the front of the following paragraph so the packed
// text stays an exact slice of the file.
func paragraphs(ls []line) [][]line {
	var out [][]line
	start := 0
	for i := 1; i < len(ls); i++ {
		if strings.TrimSpace(ls[i-1].text) == "" && strings.TrimSpace(ls[i].text) != "" {
			out = append(out, ls[start:i])
			start = i
		}
	}
	return append(out, ls[start:])
}

// splitWords cuts one over-long line at word boundaries; pieces are exact
// substrings of the line. A single word longer than the budget is cut at
// rune boundaries.
func splitWords(s string, budget int) []string {
	var out []string
	start, tok := -1, 0
	i := 0
	for i < len(s) {
		// Skip spaces.
		for i < len(s) && s[i] == ' ' || i < len(s) && s[i] == '\t' {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		w := s[i:j]
		wt := EstimateTokens(w)
		if wt > budget {
			if start >= 0 {
				out = append(out, strings.TrimRight(s[start:i], " \t"))
				start, tok = -1, 0
			}
			out = append(out, splitRunes(w, budget)...)
			i = j
			continue
		}
		if start >= 0 && tok+wt > budget {
			out = append(out, strings.TrimRight(s[start:i], " \t"))
			start, tok = -1, 0
		}
		if start < 0 {
			start = i
		}
		tok += wt
		i = j
	}
	if start >= 0 {
		out = append(out, strings.TrimRight(s[start:], " \t"))
	}
	return out
}

// splitRunes cuts a word longer than the budget at rune boundaries into
// pieces of at most budget estimated tokens each. The estimate of a piece is
// not the sum of its runes' (one digit re-prices the letters before it), so
// each rune is priced with the piece it would join.
func splitRunes(w string, budget int) []string {
	var out []string
	start := 0
	var c tokenCount
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		next := c
		next.add(r, size)
		if i > start && next.total() > budget {
			out = append(out, w[start:i])
			start = i
			next = tokenCount{}
			next.add(r, size)
		}
		c = next
		i += size
	}
	return append(out, w[start:])
}

// EstimateTokens approximates the BERT word-piece count of s without a
// vocabulary, erring high: punctuation and CJK characters count one each,
// and a word counts one piece per six letters (per three characters when it
// holds digits, as numbers and hashes split finely). It depends on nothing
// but s, so chunk boundaries do not move when a model is installed.
func EstimateTokens(s string) int {
	var c tokenCount
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		c.add(r, size)
	}
	return c.total()
}

// tokenCount is EstimateTokens one rune at a time: the pieces of the words
// already ended, and the word in progress.
type tokenCount struct {
	n, wordLen int
	digits     bool
}

func (c *tokenCount) endWord() {
	c.n += c.word()
	c.wordLen, c.digits = 0, false
}

// word is the estimate of the word in progress.
func (c *tokenCount) word() int {
	per := 6
	if c.digits {
		per = 3
	}
	return (c.wordLen + per - 1) / per
}

func (c *tokenCount) total() int { return c.n + c.word() }

// add counts rune r, which took size bytes of the text.
func (c *tokenCount) add(r rune, size int) {
	switch {
	case r == utf8.RuneError && size <= 1:
		c.endWord()
		c.n++
	case unicode.IsSpace(r):
		c.endWord()
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
		c.endWord()
		c.n++
	case unicode.IsLetter(r) || unicode.IsMark(r):
		c.wordLen++
	case unicode.IsDigit(r):
		c.wordLen++
		c.digits = true
	default:
		c.endWord()
		c.n++
	}
}
