package capture

import (
	"encoding/json"
	"strconv"
	"strings"
)

// caConversation is one conversation of a Claude data export
// (conversations.json, a list): chat_messages in order, each with a sender
// (human or assistant), its text and, in newer exports, content blocks.
type caConversation struct {
	UUID         string `json:"uuid"`
	Name         string `json:"name"`
	ChatMessages *[]struct {
		UUID      string          `json:"uuid"`
		Sender    string          `json:"sender"`
		Text      string          `json:"text"`
		Content   json.RawMessage `json:"content"`
		CreatedAt string          `json:"created_at"`
	} `json:"chat_messages"`
}

func parseClaudeAI(name string, data []byte) ([]Conversation, error) {
	var out []Conversation
	err := eachJSONElement(name, data, func(line int, raw json.RawMessage) error {
		var ca caConversation
		if err := json.Unmarshal(raw, &ca); err != nil {
			return errAt(name, line, "not a Claude conversation: %v", err)
		}
		if ca.ChatMessages == nil {
			return errAt(name, line, "not a Claude conversation: no chat_messages")
		}
		if ca.UUID == "" {
			return errAt(name, line, "conversation without a uuid")
		}
		c := Conversation{ID: ca.UUID, Title: ca.Name}
		for i, m := range *ca.ChatMessages {
			role := normRole(m.Sender)
			if role != RoleUser && role != RoleAssistant {
				return errAt(name, line, "conversation %s, message %d: unknown sender %q", ca.UUID, i+1, m.Sender)
			}
			key := m.UUID
			if key == "" {
				key = "m" + strconv.Itoa(i)
			}
			at, _ := parseTime(m.CreatedAt)
			turns, err := contentTurns(m.Content, role, key, at)
			if err != nil {
				return errAt(name, line, "conversation %s, message %d: %v", ca.UUID, i+1, err)
			}
			if len(turns) == 0 && strings.TrimSpace(m.Text) != "" {
				turns = []Turn{{Key: key, Role: role, Text: m.Text, Time: at}}
			}
			c.Turns = append(c.Turns, turns...)
		}
		out = append(out, c)
		return nil
	})
	return out, err
}
