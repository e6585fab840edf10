package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/memfile"
)

// A session file is a memory file: a title, then one "## " section per
// exchange (a user turn and what answered it), one line per turn with its
// role. Each section ends with a machine comment listing its turns' keys
// (hashed), which is how a later import of the same, grown, conversation
// knows what is already there; the miner leaves that line out of drawers.
//
//	# Session — fix the login test (alice)
//	<!-- hivemem:session format=claude-code id=4f1c… -->
//
//	## 2026-11-29 14:03 — fix the login test
//	- **user**: fix the login test
//	- **tool call**: Bash: go test ./auth/...
//	- **tool result**: ok (3 lines)
//	- **assistant**: Fixed: the token expired…
//	<!-- hivemem:turns 3f2a9b0c1d2e 77aa01b2c3d4 … -->
const (
	turnsPrefix   = chunk.MachineCommentPrefix + "turns "
	sessionPrefix = chunk.MachineCommentPrefix + "session "
	commentEnd    = " -->"
)

// maxTurnBytes caps one turn's text in a session file; the rest is cut
// with a note of how much was left out.
const maxTurnBytes = 16 << 10

// turnKey hashes a turn key to the 12 hex digits kept in the file: keys of
// any form fit a comment, and 48 bits make a collision between two turns
// of one conversation negligible.
func turnKey(k string) string {
	s := sha256.Sum256([]byte(k))
	return hex.EncodeToString(s[:6])
}

// convHash names a conversation in its session file names.
func convHash(format, id string) string {
	s := sha256.Sum256([]byte(format + "\x00" + id))
	return hex.EncodeToString(s[:4])
}

// fileStem is "<date>-<slug>-<hash>" for a conversation's first session file.
func fileStem(c Conversation, fallback time.Time) string {
	at := c.Start()
	if at.IsZero() {
		at = fallback
	}
	slug := slugify(c.title(), 40)
	if slug == "" {
		slug = "session"
	}
	return at.UTC().Format("2006-01-02") + "-" + slug + "-" + convHash(c.Format, c.ID)
}

// title is the conversation's title, else its first user turn.
func (c Conversation) title() string {
	if strings.TrimSpace(c.Title) != "" {
		return c.Title
	}
	for _, t := range c.Turns {
		if t.Role == RoleUser && !t.Sidechain {
			return t.Text
		}
	}
	return ""
}

// slugify keeps lowercase ASCII letters and digits, dashes between words.
func slugify(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	out := b.String()
	if len(out) > n {
		// Cut at a word boundary when one is near.
		out = out[:n]
		if i := strings.LastIndexByte(out, '-'); i >= n/2 {
			out = out[:i]
		}
	}
	return strings.Trim(out, "-")
}

// header is a new session file's first lines.
func header(c Conversation, agent string) string {
	title := oneLine(c.title(), 80)
	if title == "" {
		title = "session"
	}
	return "# Session — " + title + " (" + agent + ")\n" +
		sessionPrefix + "format=" + commentSafe(c.Format) + " id=" + commentSafe(c.ID) + commentEnd + "\n\n"
}

// commentSafe keeps a value from ending or breaking the comment it is in.
func commentSafe(s string) string {
	s = oneLine(s, 200)
	s = strings.ReplaceAll(s, "--", "-")
	return strings.ReplaceAll(s, " ", "_")
}

// section is one "## " section to append.
type section struct {
	heading string
	body    string
	turns   int
}

// sections groups turns into exchanges: each user turn (not a sub-agent's)
// starts a section. Turns without a time are dated fallback.
func sections(turns []Turn, fallback time.Time) []section {
	var out []section
	var cur []Turn
	flush := func() {
		if len(cur) > 0 {
			out = append(out, renderSection(cur, fallback))
		}
		cur = nil
	}
	for _, t := range turns {
		if t.Role == RoleUser && !t.Sidechain && len(cur) > 0 {
			flush()
		}
		cur = append(cur, t)
	}
	flush()
	return out
}

func renderSection(turns []Turn, fallback time.Time) section {
	var at time.Time
	for _, t := range turns {
		if !t.Time.IsZero() {
			at = t.Time
			break
		}
	}
	when := fallback.UTC().Format("2006-01-02")
	if !at.IsZero() {
		when = at.UTC().Format("2006-01-02 15:04")
	}
	topic := "(continued)"
	if first := turns[0]; first.Role == RoleUser && !first.Sidechain {
		topic = oneLine(first.Text, 60)
	}
	var b strings.Builder
	keys := make([]string, 0, len(turns))
	for _, t := range turns {
		b.WriteString(renderTurn(t))
		keys = append(keys, turnKey(t.Key))
	}
	b.WriteString(turnsPrefix + strings.Join(keys, " ") + commentEnd + "\n")
	return section{heading: when + " — " + topic, body: b.String(), turns: len(turns)}
}

// renderTurn is "- **role**: text" for a one-line turn; a longer one has
// its text on the lines after, escaped as a remembered note is (headings,
// open fences) so it cannot change the file's structure.
func renderTurn(t Turn) string {
	role := t.Role
	if t.Sidechain {
		role += " (subagent)"
	}
	text := strings.TrimSpace(cleanText(t.Text))
	if t.short() {
		text = oneLine(text, shortLine)
	}
	if text == "" {
		text = "(empty)"
	}
	if len(text) > maxTurnBytes {
		cut := maxTurnBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n… (%d more bytes not kept)", len(text)-cut)
	}
	if !strings.Contains(text, "\n") {
		return "- **" + role + "**: " + text + "\n"
	}
	lines := strings.Split(strings.TrimSuffix(memfile.EscapeBody(text), "\n"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, chunk.MachineCommentPrefix) {
			lines[i] = `\` + l
		}
	}
	return "- **" + role + "**:\n" + strings.Join(lines, "\n") + "\n"
}

// keysIn collects the turn keys recorded in a session file: the last line
// of each section, when it is a turns comment.
func keysIn(data []byte, into map[string]bool) error {
	f, err := memfile.Parse(data)
	if err != nil {
		return err
	}
	for _, s := range f.Sections {
		body := strings.TrimRight(s.Body(), "\r\n \t")
		last := body[strings.LastIndexByte(body, '\n')+1:]
		rest, ok := strings.CutPrefix(strings.TrimRight(last, "\r"), turnsPrefix)
		if !ok {
			continue
		}
		for _, k := range strings.Fields(strings.TrimSuffix(rest, strings.TrimSpace(commentEnd))) {
			into[k] = true
		}
	}
	return nil
}
