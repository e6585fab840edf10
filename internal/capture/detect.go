package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/palace"
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
		// JSON lines: the first lines that tell (a Claude Code transcript
		// may open with bookkeeping lines, such as file-history-snapshot).
		rest := t
		for n := 0; n < 50 && len(rest) > 0; n++ {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var o map[string]json.RawMessage
			if json.Unmarshal(line, &o) != nil {
				if n == 0 {
					// One object over several lines: an export of one conversation.
					if json.Unmarshal(t, &o) != nil {
						return ""
					}
					return detectObject(o, true)
				}
				return ""
			}
			if f := detectObject(o, false); f != "" {
				return f
			}
		}
		return ""
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

// Found is a conversation file Collect recognised.
type Found struct {
	Path   string `json:"path"`
	Format string `json:"format"`
}

// Collect finds the conversation files under root (a directory, or one
// file): files named *.jsonl, *.json, *.md, *.markdown or *.txt whose
// content Detect recognises. Hidden directories and node_modules are not
// entered; files it cannot read or tell are passed over, with a reason.
func Collect(ctx context.Context, root string) ([]Found, []palace.Skip, error) {
	var found []Found
	var skipped []palace.Skip
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if path == root {
				return err
			}
			skipped = append(skipped, palace.Skip{Path: path, Reason: "unreadable: " + err.Error()})
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		lower := strings.ToLower(name)
		ok := false
		for _, ext := range []string{".jsonl", ".json", ".md", ".markdown", ".txt"} {
			ok = ok || strings.HasSuffix(lower, ext)
		}
		if !ok || strings.HasPrefix(name, ".") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Size() > MaxSourceBytes {
			skipped = append(skipped, palace.Skip{Path: path, Reason: fmt.Sprintf("too large: %d bytes", info.Size())})
			return nil
		}
		data, err := atomicio.ReadRegular(path)
		if err != nil {
			skipped = append(skipped, palace.Skip{Path: path, Reason: "unreadable: " + err.Error()})
			return nil
		}
		if f := Detect(path, data); f != "" {
			found = append(found, Found{Path: path, Format: f})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("collect conversations in %s: %w", root, err)
	}
	return found, skipped, nil
}
