package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// readSettings reads a JSON settings file as a generic document (numbers
// kept as written); a missing or empty file is an empty document.
func readSettings(path string) (map[string]any, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, nil, fmt.Errorf("%s is not a JSON object (%v): fix it or move it away; nothing was changed", path, err)
	}
	return doc, data, nil
}

// writeSettings backs the old file up beside it (when there was one) and
// swaps the new document in atomically.
func writeSettings(path string, old []byte, doc map[string]any) (backup string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if old != nil {
		// Never over an earlier backup (two installs in one second).
		base := path + ".hivemem-backup-" + time.Now().UTC().Format("20060102T150405Z")
		backup = base
		for i := 2; ; i++ {
			if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
				break
			}
			backup = fmt.Sprintf("%s-%d", base, i)
		}
		if err := atomicio.WriteFile(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return backup, atomicio.WriteFile(path, buf.Bytes(), 0o644)
}

// isHivememHook recognises a hook command hivemem installs: a binary
// whose name contains "hivemem", then "hook session-start" or "hook save".
// Other programs' hooks, even ones that mention hivemem, are not ours.
func isHivememHook(command string) bool {
	bin, rest := firstShellWord(strings.TrimSpace(command))
	base := strings.ToLower(bin[strings.LastIndexAny(bin, `/\`)+1:])
	if !strings.Contains(base, "hivemem") {
		return false
	}
	f := strings.Fields(rest)
	return len(f) >= 2 && f[0] == "hook" && (f[1] == "session-start" || f[1] == "save")
}

// firstShellWord splits off a command line's first word, undoing the
// quoting shellQuote (and a user) may have used: '…', "…" and \x.
func firstShellWord(s string) (word, rest string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			return b.String(), s[i:]
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return b.String() + s[i+1:], ""
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return b.String() + s[i+1:], ""
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// hookGroups returns settings.hooks[event] as a list, checking the shape.
func hookGroups(hooks map[string]any, event string) ([]any, error) {
	v, ok := hooks[event]
	if !ok {
		return nil, nil
	}
	groups, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("hooks.%s is not a list", event)
	}
	return groups, nil
}

// dropOurs removes hivemem's hooks from an event's groups (and groups left
// empty by that); it reports whether the exact command was there, alone.
func dropOurs(groups []any, keep string) (out []any, hadExact bool, err error) {
	for _, gr := range groups {
		m, ok := gr.(map[string]any)
		if !ok {
			out = append(out, gr)
			continue
		}
		list, ok := m["hooks"].([]any)
		if !ok {
			out = append(out, gr)
			continue
		}
		var rest []any
		for _, h := range list {
			hm, ok := h.(map[string]any)
			cmd, _ := hm["command"].(string)
			if ok && isHivememHook(cmd) {
				if cmd == keep && keep != "" {
					hadExact = true
				}
				continue
			}
			rest = append(rest, h)
		}
		if len(rest) == len(list) {
			out = append(out, gr)
			continue
		}
		if len(rest) > 0 {
			cp := map[string]any{}
			for k, v := range m {
				cp[k] = v
			}
			cp["hooks"] = rest
			out = append(out, cp)
		}
	}
	return out, hadExact, nil
}

func settingsHooks(doc map[string]any) (map[string]any, error) {
	v, ok := doc["hooks"]
	if !ok {
		return nil, nil
	}
	hooks, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`"hooks" is not an object`)
	}
	return hooks, nil
}

// mergeHooks adds hivemem's hook to each of the target's events, replacing
// an older hivemem hook there; an event that has exactly this hook already
// is left alone (so installing twice changes nothing).
func mergeHooks(doc map[string]any, t target, commands map[string]string) ([]string, error) {
	hooks, err := settingsHooks(doc)
	if err != nil {
		return nil, err
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	var changed []string
	for _, e := range t.events {
		groups, err := hookGroups(hooks, e.name)
		if err != nil {
			return nil, err
		}
		cmd := commands[e.sub]
		if exactlyOnce(groups, cmd) {
			continue
		}
		rest, _, err := dropOurs(groups, cmd)
		if err != nil {
			return nil, err
		}
		rest = append(rest, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": e.timeout}}})
		hooks[e.name] = rest
		changed = append(changed, e.name)
	}
	doc["hooks"] = hooks
	return changed, nil
}

// exactlyOnce reports whether cmd is the one hivemem hook among groups.
func exactlyOnce(groups []any, cmd string) bool {
	n, exact := 0, 0
	for _, gr := range groups {
		m, _ := gr.(map[string]any)
		list, _ := m["hooks"].([]any)
		for _, h := range list {
			hm, _ := h.(map[string]any)
			c, _ := hm["command"].(string)
			if isHivememHook(c) {
				n++
				if c == cmd {
					exact++
				}
			}
		}
	}
	return n == 1 && exact == 1
}

// removeHooks removes every hivemem hook, and the groups, events and
// "hooks" object that held nothing else.
func removeHooks(doc map[string]any) ([]string, error) {
	hooks, err := settingsHooks(doc)
	if err != nil || hooks == nil {
		return nil, err
	}
	var changed []string
	for event := range hooks {
		groups, err := hookGroups(hooks, event)
		if err != nil {
			return nil, err
		}
		rest, _, err := dropOurs(groups, "")
		if err != nil {
			return nil, err
		}
		if reflect.DeepEqual(rest, groups) || len(rest) == len(groups) && len(groups) == 0 {
			continue
		}
		changed = append(changed, event)
		if len(rest) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = rest
		}
	}
	if len(hooks) == 0 {
		delete(doc, "hooks")
	}
	return changed, nil
}
