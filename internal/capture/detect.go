package capture

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Detect tells the format of a source file from its content (and, for
// plain transcripts, its name): "" when it is none hivemem reads.
func Detect(name string, data []byte) string {
	t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF")))
	if len(t) == 0 {
		return ""
	}
	switch t[0] {
	case '[':
		dec := json.NewDecoder(bytes.NewReader(t))
		if _, err := dec.Token(); err != nil || !dec.More() {
			return ""
		}
		var first map[string]json.RawMessage
		if dec.Decode(&first) != nil {
			return ""
		}
		return detectObject(first, true)
	case '{':
		line := t
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			line = t[:i]
		}
		var first map[string]json.RawMessage
		if json.Unmarshal(line, &first) != nil {
			// One object over several lines: an export of one conversation.
			if json.Unmarshal(t, &first) != nil {
				return ""
			}
			return detectObject(first, true)
		}
		return detectObject(first, false)
	}
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".txt") || strings.HasSuffix(lower, ".markdown") {
		n := 0
		for _, l := range strings.Split(string(t), "\n") {
			if roleLine.MatchString(l) {
				n++
			}
		}
		if n >= 2 {
			return "markdown"
		}
	}
	return ""
}

func detectObject(o map[string]json.RawMessage, list bool) string {
	has := func(k string) bool { _, ok := o[k]; return ok }
	typ := scalar(o["type"])
	switch {
	case has("mapping") && (has("current_node") || has("title")):
		return "chatgpt"
	case has("chat_messages"):
		return "claude-ai"
	case has("payload") && (typ == "session_meta" || typ == "response_item" || typ == "event_msg" || typ == "turn_context"):
		return "codex"
	case !list && has("id") && has("timestamp") && (has("instructions") || has("git")):
		return "codex" // a legacy rollout's first line
	case !list && (has("sessionId") || has("parentUuid") || typ == "summary" && has("leafUuid")):
		return "claude-code"
	case has("role") && has("content"):
		return "generic"
	}
	return ""
}
