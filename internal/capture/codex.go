package capture

import (
	"encoding/json"
	"strconv"
)

// cxLine is one line of a Codex rollout (~/.codex/sessions/YYYY/MM/DD/
// rollout-*.jsonl): {timestamp, type, payload}, where session_meta carries
// the session id and response_item a message, a function or custom tool
// call, its output, or reasoning. Older rollouts have no envelope: the
// first line is the session ({id, timestamp}) and the items follow as they
// are.
type cxLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// Legacy first line, and legacy record markers.
	ID         string `json:"id"`
	RecordType string `json:"record_type"`
}

type cxItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
}

func parseCodex(name string, data []byte) ([]Conversation, error) {
	c := Conversation{ID: baseName(name)}
	first := true
	err := eachJSONLine(name, data, func(n int, raw []byte) error {
		var l cxLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return errAt(name, n, "not a Codex rollout line: %v", err)
		}
		isFirst := first
		first = false
		var item cxItem
		switch {
		case l.Type == "session_meta":
			var meta struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(l.Payload, &meta); err != nil {
				return errAt(name, n, "session_meta: %v", err)
			}
			if meta.ID != "" {
				c.ID = meta.ID
			}
			return nil
		case l.Type == "response_item":
			if err := json.Unmarshal(l.Payload, &item); err != nil {
				return errAt(name, n, "response_item: %v", err)
			}
		case l.Payload == nil && l.RecordType == "" && l.Type != "":
			// A legacy rollout's item, without the envelope.
			if err := json.Unmarshal(raw, &item); err != nil {
				return errAt(name, n, "%v", err)
			}
		case l.Payload == nil && isFirst && l.ID != "":
			c.ID = l.ID
			return nil
		default: // event_msg, turn_context, compacted, state records
			return nil
		}
		at, _ := parseTime(l.Timestamp)
		if at.IsZero() {
			at, _ = parseTime(item.Timestamp)
		}
		key := "L" + strconv.Itoa(n)
		switch item.Type {
		case "message":
			role := normRole(item.Role)
			if role != RoleUser && role != RoleAssistant {
				return nil // developer and system prompts
			}
			turns, err := contentTurns(item.Content, role, key, at)
			if err != nil {
				return errAt(name, n, "%v", err)
			}
			for _, t := range turns {
				if role == RoleUser && codexContext(t.Text) {
					continue
				}
				c.Turns = append(c.Turns, t)
			}
		case "function_call", "custom_tool_call":
			args := item.Arguments
			if len(args) == 0 {
				args = item.Input
			}
			c.Turns = append(c.Turns, Turn{Key: key, Role: RoleToolCall, Text: toolLine(item.Name, args), Time: at})
		case "local_shell_call":
			c.Turns = append(c.Turns, Turn{Key: key, Role: RoleToolCall, Text: toolLine("shell", item.Action), Time: at})
		case "web_search_call":
			c.Turns = append(c.Turns, Turn{Key: key, Role: RoleToolCall, Text: toolLine("web_search", item.Action), Time: at})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			c.Turns = append(c.Turns, Turn{Key: key, Role: RoleToolResult, Text: resultLine(item.Output), Time: at})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []Conversation{c}, nil
}

// codexContext recognises the context Codex sends as user messages at the
// start of a session (instructions, environment), which nobody typed.
func codexContext(s string) bool {
	return startsWithAny(s, "<environment_context>", "<user_instructions>", "<permissions instructions>", "# AGENTS.md instructions")
}
