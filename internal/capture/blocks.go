package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Tool calls and results are reduced to one line of at most this many runes.
const shortLine = 120

// block is a content block of the Anthropic message shape (Claude Code
// transcripts, Claude exports, generic content lists).
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	ToolUseID string          `json:"tool_use_id"`
}

// contentTurns turns message content (a string, or a list of blocks) into
// turns keyed key (a string) or key#i (block i). Thinking is left out.
func contentTurns(raw json.RawMessage, role, key string, at time.Time) ([]Turn, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		return []Turn{{Key: key, Role: role, Text: s, Time: at}}, nil
	}
	var blocks []block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	var out []Turn
	for i, b := range blocks {
		t := Turn{Key: key + "#" + strconv.Itoa(i), Role: role, Time: at}
		switch b.Type {
		case "text", "input_text", "output_text", "":
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			t.Text = b.Text
		case "tool_use", "server_tool_use":
			t.Role, t.Text = RoleToolCall, toolLine(b.Name, b.Input)
		case "tool_result", "web_search_tool_result":
			t.Role, t.Text = RoleToolResult, resultLine(b.Content)
			if b.IsError {
				t.Role = RoleToolError
			}
		case "image":
			t.Text = "[image]"
		case "document":
			t.Text = "[document]"
		default: // thinking, redacted_thinking and blocks yet unknown
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// toolLine is "name: the input's gist", one line: the command, path,
// pattern or query the call is about, else its input as compact JSON.
func toolLine(name string, input json.RawMessage) string {
	name = oneLine(name, 40)
	if name == "" {
		name = "tool"
	}
	gist := inputGist(input)
	if gist == "" {
		return name
	}
	return oneLine(name+": "+gist, shortLine)
}

func inputGist(input json.RawMessage) string {
	input = bytes.TrimSpace(input)
	if len(input) == 0 || string(input) == "null" || string(input) == "{}" {
		return ""
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		// Codex passes arguments as a JSON string of an object.
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			return inputGist(json.RawMessage(t))
		}
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) == nil {
		for _, k := range []string{"command", "cmd", "file_path", "path", "pattern", "query", "url", "description", "prompt", "code", "input"} {
			if v, ok := m[k]; ok {
				if g := valueGist(v); g != "" {
					return g
				}
			}
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, input) == nil {
		return buf.String()
	}
	return string(input)
}

// valueGist is a string value, or a list of strings joined with spaces.
func valueGist(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return strings.Join(list, " ")
	}
	return ""
}

// resultLine reduces a tool result (a string, a list of text blocks, or an
// object with an output) to its first non-blank line and its size.
func resultLine(raw json.RawMessage) string {
	text := resultText(raw)
	lines := strings.Split(strings.TrimSpace(cleanText(text)), "\n")
	first := ""
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = l
			break
		}
	}
	if first == "" {
		return "(empty)"
	}
	if len(lines) > 1 {
		return oneLine(first, shortLine-16) + fmt.Sprintf(" (%d lines)", len(lines))
	}
	return oneLine(first, shortLine)
}

func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		// Codex wraps output as a JSON string of {"output": ...}.
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			var o struct {
				Output *string `json:"output"`
			}
			if json.Unmarshal([]byte(t), &o) == nil && o.Output != nil {
				return *o.Output
			}
		}
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			switch {
			case b.Text != "":
				parts = append(parts, b.Text)
			case b.Type == "image":
				parts = append(parts, "[image]")
			}
		}
		return strings.Join(parts, "\n")
	}
	var o struct {
		Output  json.RawMessage `json:"output"`
		Content json.RawMessage `json:"content"`
		Text    string          `json:"text"`
	}
	if json.Unmarshal(raw, &o) == nil {
		switch {
		case len(o.Output) > 0:
			return resultText(o.Output)
		case len(o.Content) > 0:
			return resultText(o.Content)
		case o.Text != "":
			return o.Text
		}
	}
	return string(raw)
}

// eachJSONLine calls fn for every non-blank line of JSON lines data with
// its 1-based number; a line that is not a JSON object is an error naming
// file and line. A last line with no line break after it that is the
// start of an object cut short is a line still being written (a live
// transcript, read as the agent appends to it): it is left for the next
// read, not an error, so that every complete line before it is taken.
func eachJSONLine(name string, data []byte, fn func(line int, raw []byte) error) error {
	n := 0
	for len(data) > 0 {
		n++
		var l []byte
		unfinished := false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data, unfinished = data, nil, true
		}
		l = bytes.TrimSpace(l)
		if n == 1 {
			l = bytes.TrimPrefix(l, []byte("\uFEFF"))
		}
		if len(l) == 0 {
			continue
		}
		if l[0] != '{' || !json.Valid(l) {
			if unfinished && l[0] == '{' {
				return nil // still being written: the next read takes it
			}
			return errAt(name, n, "not a JSON object (want JSON lines, one object per line)")
		}
		if err := fn(n, l); err != nil {
			return err
		}
	}
	return nil
}

// lineOf is the 1-based line of byte offset off in data.
func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// eachJSONElement decodes a JSON list (a lone object counts as a list of
// one) and calls fn for every element with the line it starts on.
func eachJSONElement(name string, data []byte, fn func(line int, raw json.RawMessage) error) error {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	dec := json.NewDecoder(bytes.NewReader(data))
	syntax := func(err error) error {
		if se, ok := err.(*json.SyntaxError); ok {
			return errAt(name, lineOf(data, se.Offset), "invalid JSON: %v", err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errAt(name, lineOf(data, int64(len(bytes.TrimRight(data, " \t\r\n")))), "invalid JSON: the file ends early (%v)", err)
		}
		return errAt(name, lineOf(data, dec.InputOffset()), "invalid JSON: %v", err)
	}
	tok, err := dec.Token()
	if err != nil {
		return syntax(err)
	}
	switch tok {
	case json.Delim('{'):
		var raw json.RawMessage
		if err := json.Unmarshal(bytes.TrimSpace(data), &raw); err != nil {
			return syntax(err)
		}
		return fn(1, raw)
	case json.Delim('['):
	default:
		return errAt(name, 1, "want a JSON list or object")
	}
	for dec.More() {
		// InputOffset is before the separator and spaces: skip them to
		// the element's first byte.
		off := dec.InputOffset()
		off += int64(len(leadingSpace(data[min(int64(len(data)), off):])))
		line := lineOf(data, off)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntax(err)
		}
		if err := fn(line, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntax(err)
	}
	if dec.More() {
		return errAt(name, lineOf(data, dec.InputOffset()), "unexpected data after the JSON list")
	}
	return nil
}

func leadingSpace(b []byte) []byte { return b[:len(b)-len(bytes.TrimLeft(b, " \t\r\n,"))] }
