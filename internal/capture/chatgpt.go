package capture

import (
	"encoding/json"
	"strings"
)

// gptConversation is one conversation of a ChatGPT data export
// (conversations.json, a list): messages are nodes of a tree under
// mapping (edits and regenerations branch it), and current_node is the
// leaf the user last saw; the conversation is the path from the root to it.
type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	Title          string             `json:"title"`
	CreateTime     float64            `json:"create_time"`
	CurrentNode    string             `json:"current_node"`
	Mapping        map[string]gptNode `json:"mapping"`
}

type gptNode struct {
	ID       string      `json:"id"`
	Parent   string      `json:"parent"`
	Children []string    `json:"children"`
	Message  *gptMessage `json:"message"`
}

type gptMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime float64 `json:"create_time"`
	Recipient  string  `json:"recipient"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
		Result      string            `json:"result"`
	} `json:"content"`
	Metadata struct {
		Hidden bool `json:"is_visually_hidden_from_conversation"`
	} `json:"metadata"`
}

func parseChatGPT(name string, data []byte) ([]Conversation, error) {
	var out []Conversation
	err := eachJSONElement(name, data, func(line int, raw json.RawMessage) error {
		var g gptConversation
		if err := json.Unmarshal(raw, &g); err != nil {
			return errAt(name, line, "not a ChatGPT conversation: %v", err)
		}
		if g.Mapping == nil {
			return errAt(name, line, "not a ChatGPT conversation: no mapping")
		}
		c := Conversation{ID: g.ConversationID, Title: g.Title}
		if c.ID == "" {
			c.ID = g.ID
		}
		path, err := gptPath(g)
		if err != nil {
			return errAt(name, line, "conversation %q: %v", c.ID, err)
		}
		if c.ID == "" {
			return errAt(name, line, "conversation without an id")
		}
		for _, m := range path {
			if t, ok := gptTurn(m); ok {
				c.Turns = append(c.Turns, t)
			}
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// gptPath is the messages from the root to current_node (or, without one,
// along the last child of every node).
func gptPath(g gptConversation) ([]*gptMessage, error) {
	var ids []string
	seen := map[string]bool{}
	if g.CurrentNode != "" {
		for id := g.CurrentNode; id != ""; id = g.Mapping[id].Parent {
			if seen[id] {
				return nil, errString("the message tree has a cycle at " + id)
			}
			if _, ok := g.Mapping[id]; !ok {
				return nil, errString("node " + id + " is not in the mapping")
			}
			seen[id] = true
			ids = append(ids, id)
		}
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	} else {
		root := ""
		for id, n := range g.Mapping {
			if n.Parent == "" || g.Mapping[n.Parent].ID == "" && n.Parent != "" {
				if root == "" || id < root {
					root = id
				}
			}
		}
		for id := root; id != "" && !seen[id]; {
			seen[id] = true
			ids = append(ids, id)
			kids := g.Mapping[id].Children
			id = ""
			if len(kids) > 0 {
				id = kids[len(kids)-1]
			}
		}
	}
	var out []*gptMessage
	for _, id := range ids {
		if m := g.Mapping[id].Message; m != nil {
			if m.ID == "" {
				m.ID = id
			}
			out = append(out, m)
		}
	}
	return out, nil
}

type errString string

func (e errString) Error() string { return string(e) }

func gptTurn(m *gptMessage) (Turn, bool) {
	if m.Metadata.Hidden {
		return Turn{}, false
	}
	at, _ := unixTime(m.CreateTime)
	t := Turn{Key: m.ID, Time: at, Role: normRole(m.Author.Role)}
	var parts []string
	for _, p := range m.Content.Parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			if strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
			continue
		}
		var o struct {
			ContentType string `json:"content_type"`
		}
		if json.Unmarshal(p, &o) == nil && strings.Contains(o.ContentType, "image") {
			parts = append(parts, "[image]")
		}
	}
	text := strings.Join(parts, "\n\n")
	switch m.Content.ContentType {
	case "text", "multimodal_text":
	case "code":
		text = m.Content.Text
	case "execution_output", "system_error", "tether_quote":
		text = m.Content.Text
	case "tether_browsing_display":
		text = m.Content.Result
	default: // thoughts, reasoning recaps, editable context
		return Turn{}, false
	}
	if strings.TrimSpace(text) == "" {
		return Turn{}, false
	}
	switch {
	case t.Role == RoleAssistant && m.Recipient != "" && m.Recipient != "all":
		t.Role, t.Text = RoleToolCall, oneLine(m.Recipient+": "+text, shortLine)
	case t.Role == RoleToolResult:
		who := m.Author.Name
		if who == "" {
			who = "tool"
		}
		t.Text = oneLine(who+": "+resultLine(mustJSON(text)), shortLine)
	case t.Role == RoleSystem || t.Role == "":
		return Turn{}, false // the hidden system prompt, unknown authors
	default:
		t.Text = text
	}
	return t, true
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
