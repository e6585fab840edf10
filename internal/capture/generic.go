package capture

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// genMessage is one message of the generic format: JSON lines, or a JSON
// list, of {role, content, timestamp?, session?, id?}. content is a string
// or a list of text blocks; timestamp is RFC 3339 (or a common layout) or
// Unix seconds; messages with the same session form one conversation (the
// file is one conversation when none has a session).
type genMessage struct {
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp json.RawMessage `json:"timestamp"`
	Session   json.RawMessage `json:"session"`
	ID        json.RawMessage `json:"id"`
}

func parseGeneric(name string, data []byte) ([]Conversation, error) {
	var out []*Conversation
	byID := map[string]*Conversation{}
	add := func(line int, raw []byte) error {
		var m genMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return errAt(name, line, "not a {role, content} message: %v", err)
		}
		if m.Role == nil {
			return errAt(name, line, "message without a role")
		}
		role := normRole(*m.Role)
		if role == "" {
			return errAt(name, line, "unknown role %q (want user, assistant, system or tool)", *m.Role)
		}
		if len(m.Content) == 0 {
			return errAt(name, line, "message without content")
		}
		session := scalar(m.Session)
		if session == "" {
			session = baseName(name)
		}
		c := byID[session]
		if c == nil {
			c = &Conversation{ID: session}
			byID[session] = c
			out = append(out, c)
		}
		at, ok := timestamp(m.Timestamp)
		if !ok {
			return errAt(name, line, "timestamp %s is not a date and time (want RFC 3339 or Unix seconds)", m.Timestamp)
		}
		key := scalar(m.ID)
		if key == "" {
			key = strconv.Itoa(len(c.Turns))
		}
		if role == RoleToolResult {
			c.Turns = append(c.Turns, Turn{Key: key, Role: role, Text: resultLine(m.Content), Time: at})
			return nil
		}
		turns, err := contentTurns(m.Content, role, key, at)
		if err != nil {
			return errAt(name, line, "%v", err)
		}
		if len(turns) == 1 {
			turns[0].Key = key
		}
		c.Turns = append(c.Turns, turns...)
		return nil
	}
	var err error
	if t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF"))); len(t) > 0 && t[0] == '[' {
		err = eachJSONElement(name, data, func(line int, raw json.RawMessage) error { return add(line, raw) })
	} else {
		err = eachJSONLine(name, data, add)
	}
	if err != nil {
		return nil, err
	}
	res := make([]Conversation, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res, nil
}

// scalar is a JSON string or number as text; "" for null or absent.
func scalar(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return string(raw)
}

// timestamp reads an optional timestamp; ok is false only for one present
// and unreadable.
func timestamp(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return time.Time{}, true
		}
		return parseTime(s)
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		if f > 1e12 { // milliseconds
			f /= 1000
		}
		return unixTime(f)
	}
	return time.Time{}, false
}
