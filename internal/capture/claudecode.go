package capture

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// ccLine is one line of a Claude Code session transcript
// (~/.claude/projects/<project>/<session>.jsonl): "user" and "assistant"
// lines carry a message whose content is a string or a list of text,
// tool_use, tool_result and thinking blocks; "summary" lines carry a
// title; other types (system, file-history-snapshot, …) are bookkeeping.
type ccLine struct {
	Type        string `json:"type"`
	UUID        string `json:"uuid"`
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	// IsCompactSummary marks the user line that carries the summary a
	// compaction left in place of the conversation before it.
	IsCompactSummary bool   `json:"isCompactSummary"`
	Summary          string `json:"summary"`
	Message          *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

func parseClaudeCode(name string, data []byte) ([]Conversation, error) {
	c := Conversation{ID: baseName(name)}
	sawSession := false
	err := eachJSONLine(name, data, func(n int, raw []byte) error {
		var l ccLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return errAt(name, n, "not a Claude Code transcript line: %v", err)
		}
		if l.SessionID != "" && !sawSession {
			c.ID, sawSession = l.SessionID, true
		}
		switch l.Type {
		case "summary":
			if c.Title == "" && strings.TrimSpace(l.Summary) != "" {
				c.Title = l.Summary
			}
			return nil
		case "user", "assistant":
		default:
			return nil
		}
		if l.Message == nil {
			return errAt(name, n, "%s line without a message", l.Type)
		}
		if l.IsMeta {
			return nil
		}
		key := l.UUID
		if key == "" {
			key = "L" + strconv.Itoa(n)
		}
		at, _ := parseTime(l.Timestamp)
		role := RoleUser
		if l.Type == "assistant" {
			role = RoleAssistant
		}
		if l.IsCompactSummary {
			role = RoleSummary
		}
		turns, err := contentTurns(l.Message.Content, role, key, at)
		if err != nil {
			return errAt(name, n, "%v", err)
		}
		for _, t := range turns {
			if role == RoleUser && t.Role == RoleUser && commandNoise(t.Text) {
				continue
			}
			t.Sidechain = l.IsSidechain
			c.Turns = append(c.Turns, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []Conversation{c}, nil
}

// commandNoise recognises the user lines Claude Code writes for its own
// slash commands and their local output.
func commandNoise(s string) bool {
	return startsWithAny(s, "<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "Caveat: The messages below were generated")
}

// startsWithAny says whether s, leading white space aside, starts with one
// of the prefixes.
func startsWithAny(s string, prefixes ...string) bool {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
