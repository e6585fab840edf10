package capture

import (
	"regexp"
	"strconv"
	"strings"
)

// roleLine matches a line that starts a turn in a plain transcript:
// "user: …", "> User: …", "**Assistant:** …", "- human: …".
var roleLine = regexp.MustCompile(`(?i)^\s{0,3}(>\s?)?(?:[-*]\s+)?(?:\*\*|__)?(user|human|assistant|ai|system|claude|chatgpt|codex|bot)(?:\*\*|__)?\s*:(?:\*\*|__)?[ \t]?(.*)$`)

// parseTranscript reads a markdown or text transcript: a line starting
// with a role and a colon begins a turn, the lines after it continue it
// (without the "> " quote mark when the turn began quoted). A "# " title
// before the first turn names the conversation; other text before it is
// ignored. The file is one conversation.
func parseTranscript(name string, data []byte) ([]Conversation, error) {
	text := cleanText(string(data))
	c := Conversation{ID: baseName(name)}
	var cur *Turn
	quoted := false
	var body []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(strings.Join(body, "\n"))
			if cur.Text != "" {
				c.Turns = append(c.Turns, *cur)
			}
		}
		cur, body = nil, nil
	}
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if m := roleLine.FindStringSubmatch(l); m != nil {
			flush()
			n++
			cur = &Turn{Key: "t" + strconv.Itoa(n), Role: normRole(m[2])}
			quoted = m[1] != ""
			body = []string{m[3]}
			continue
		}
		if cur == nil {
			if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok && c.Title == "" {
				c.Title = t
			}
			continue
		}
		if quoted {
			if rest, ok := strings.CutPrefix(l, ">"); ok {
				l = strings.TrimPrefix(rest, " ")
			}
		}
		body = append(body, l)
	}
	flush()
	if n == 0 {
		return nil, errAt(name, 0, `no turns found: want lines starting "user:" or "assistant:" (optionally quoted with "> " or in bold)`)
	}
	return []Conversation{c}, nil
}
