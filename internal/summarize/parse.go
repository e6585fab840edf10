package summarize

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hivemem/hivemem/internal/mdfence"
)

// maxUnwrap bounds how many envelopes Parse peels off, so a reply that is a
// string of a string of a string ... cannot recurse without end.
const maxUnwrap = 4

// Parse checks a summariser's reply against the output contract and returns
// the Result it carries. The contract is strict because the result is written
// into an agent's only source of truth:
//
//   - the reply is a JSON object, optionally inside a ```json fence, or
//     wrapped in an envelope: a JSON string holding the object, or an object
//     with a string "result" (the claude CLI's {"type":"result",...});
//   - the object has exactly the keys "condensed" (a non-empty string) and
//     "hoist" (an array of strings, possibly empty); anything else is an error
//     that says what was wrong.
//
// Whitespace is trimmed; hoist entries are collapsed to one line each and
// empty ones dropped. The condensed text is made safe to sit inside the
// condensed region: level-1/2 heading lines outside code fences are demoted
// to level 3, and a fence left open is closed, so the text can never split
// the region or swallow the headings after it.
func Parse(reply string) (Result, error) {
	return parseDepth(reply, 0)
}

func parseDepth(reply string, depth int) (Result, error) {
	if depth > maxUnwrap {
		return Result{}, errors.New("reply is nested in too many envelopes")
	}
	text := strings.TrimSpace(reply)
	if text == "" {
		return Result{}, errors.New("reply is empty")
	}
	if strings.HasPrefix(text, "```") {
		inner, err := unfence(text)
		if err != nil {
			return Result{}, err
		}
		text = inner
	}
	if text == "" {
		return Result{}, errors.New("reply is an empty code fence")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return Result{}, fmt.Errorf("reply is not JSON: %w (starts %q)", err, snippet(text, 60))
	}
	if dec.More() {
		return Result{}, errors.New("reply has text after the JSON value")
	}
	switch val := v.(type) {
	case string:
		r, err := parseDepth(val, depth+1)
		if err != nil {
			return Result{}, fmt.Errorf("JSON string envelope: %w", err)
		}
		return r, nil
	case map[string]any:
		if _, ok := val["condensed"]; ok {
			return resultFromObject(val)
		}
		if inner, ok := val["result"]; ok {
			if isErr, _ := val["is_error"].(bool); isErr {
				return Result{}, fmt.Errorf("envelope reports an error: %s", snippet(fmt.Sprint(inner), 300))
			}
			s, ok := inner.(string)
			if !ok {
				return Result{}, fmt.Errorf("envelope \"result\" is %s, want a string", jsonKind(inner))
			}
			r, err := parseDepth(s, depth+1)
			if err != nil {
				return Result{}, fmt.Errorf("envelope result: %w", err)
			}
			return r, nil
		}
		return Result{}, fmt.Errorf("JSON object has no \"condensed\" key (keys: %s)", keyList(val))
	default:
		return Result{}, fmt.Errorf("reply is a JSON %s, want an object", jsonKind(v))
	}
}

// unfence returns the body of a reply that is exactly one fenced block
// (``` or ```json). Prose around the fence is refused: the prompt asks for
// the object alone, and guessing which block is meant is how wrong text ends
// up in memory.
func unfence(text string) (string, error) {
	nl := strings.IndexByte(text, '\n')
	if nl < 0 {
		return "", errors.New("code fence has no body")
	}
	info := strings.TrimSpace(strings.TrimLeft(text[:nl], "`"))
	if info != "" && !strings.EqualFold(info, "json") {
		return "", fmt.Errorf("code fence is %q, want json", info)
	}
	body := strings.TrimRight(text[nl+1:], " \t\r\n")
	if !strings.HasSuffix(body, "```") {
		return "", errors.New("code fence is not closed at the end of the reply")
	}
	body = strings.TrimSuffix(body, "```")
	return strings.TrimSpace(body), nil
}

// resultFromObject validates the contract object itself.
func resultFromObject(obj map[string]any) (Result, error) {
	var extra []string
	for k := range obj {
		if k != "condensed" && k != "hoist" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return Result{}, fmt.Errorf("unexpected key(s) %s (want only \"condensed\" and \"hoist\")", keyList(pick(obj, extra)))
	}
	c, ok := obj["condensed"].(string)
	if !ok {
		return Result{}, fmt.Errorf("\"condensed\" is %s, want a string", jsonKind(obj["condensed"]))
	}
	c = strings.TrimSpace(c)
	if c == "" {
		return Result{}, errors.New("\"condensed\" is empty")
	}
	rawHoist, ok := obj["hoist"]
	if !ok {
		return Result{}, errors.New("\"hoist\" is missing (use [] when there is nothing to hoist)")
	}
	arr, ok := rawHoist.([]any)
	if !ok {
		return Result{}, fmt.Errorf("\"hoist\" is %s, want an array of strings", jsonKind(rawHoist))
	}
	hoist := make([]string, 0, len(arr))
	for i, item := range arr {
		s, ok := item.(string)
		if !ok {
			return Result{}, fmt.Errorf("\"hoist\"[%d] is %s, want a string", i, jsonKind(item))
		}
		s = strings.Join(strings.Fields(s), " ")
		if s != "" {
			hoist = append(hoist, s)
		}
	}
	return Result{Condensed: sanitizeCondensed(c), Hoist: hoist}, nil
}

// sanitizeCondensed keeps text from changing the structure of the memory
// file it is written into: "# "/"## " lines outside fences would start a new
// region or section, and an unclosed fence would turn the headings after the
// condensed region into code.
func sanitizeCondensed(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var fs mdfence.State
	for i, line := range lines {
		if fs.Step(line) || fs.Open() {
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) <= 3 && (strings.HasPrefix(trimmed, "# ") || strings.HasPrefix(trimmed, "## ") || trimmed == "#" || trimmed == "##") {
			lines[i] = "### " + strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
		}
	}
	out := strings.Join(lines, "\n")
	if fs.Open() {
		out += "\n" + fs.Closer()
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func pick(obj map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = obj[k]
	}
	return out
}

// keyList renders an object's keys sorted, for error messages.
func keyList(obj map[string]any) string {
	if len(obj) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, strconv.Quote(k))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// snippet shortens s for an error message.
func snippet(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
