package purge

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ScrubText takes every purged text out of data and says how many places
// it took: a text that fills whole lines takes the lines, a purged
// section's heading that is a heading line takes its section, and a text
// inside a line is replaced by Marker.
func ScrubText(data []byte, m *Matcher) ([]byte, int) {
	spans := m.Find(data)
	if len(spans) == 0 {
		return data, 0
	}
	out := make([]byte, 0, len(data))
	at := 0
	for _, s := range spans {
		if s.Start < at {
			continue // inside what a section removal took
		}
		lineStart := s.Start == 0 || data[s.Start-1] == '\n'
		switch {
		case s.Section && isHeadingText(data, s):
			start := bytes.LastIndexByte(data[:s.Start], '\n') + 1
			out = append(out, data[at:start]...)
			at = sectionEnd(data, start)
		case lineStart && s.End > s.Start && data[s.End-1] == '\n':
			out = append(out, data[at:s.Start]...)
			at = s.End
		case lineStart && (s.End == len(data) || data[s.End] == '\n'):
			out = append(out, data[at:s.Start]...)
			at = min(s.End+1, len(data))
		default:
			out = append(out, data[at:s.Start]...)
			out = append(out, Marker...)
			at = s.End
		}
	}
	out = append(out, data[at:]...)
	return out, len(spans)
}

// isHeadingText reports whether s is the whole text of a markdown heading
// line ("## text").
func isHeadingText(data []byte, s Span) bool {
	start := bytes.LastIndexByte(data[:s.Start], '\n') + 1
	level := headingLevel(data[start:])
	if level == 0 || start+level > s.Start {
		return false
	}
	if strings.TrimSpace(string(data[start+level:s.Start])) != "" {
		return false
	}
	end := len(data)
	if i := bytes.IndexByte(data[s.End:], '\n'); i >= 0 {
		end = s.End + i
	}
	return strings.TrimSpace(string(data[s.End:end])) == ""
}

// headingLevel is the number of '#' that open a heading line, 0 for a
// line that is no heading.
func headingLevel(line []byte) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(line) || (line[n] != ' ' && line[n] != '\t') {
		return 0
	}
	return n
}

// sectionEnd is where the section whose heading line starts at start ends:
// the next heading of the same or a higher level, or the end.
func sectionEnd(data []byte, start int) int {
	level := headingLevel(data[start:])
	i := start
	for {
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			return len(data)
		}
		i += nl + 1
		if l := headingLevel(data[i:]); l > 0 && l <= level {
			return i
		}
	}
}

// Redact replaces every purged text in data by Marker, keeping the rest
// byte for byte.
func redactBytes(data []byte, m *Matcher) ([]byte, int) {
	spans := m.Find(data)
	if len(spans) == 0 {
		return data, 0
	}
	out := make([]byte, 0, len(data))
	at := 0
	for _, s := range spans {
		out = append(out, data[at:s.Start]...)
		out = append(out, Marker...)
		at = s.End
	}
	return append(out, data[at:]...), len(spans)
}

// ScrubJSONLines takes every purged text out of a JSON-lines file (the
// event log): each line's strings are decoded, so a text JSON escapes is
// found too, and a line that held one is written again without it. A
// line that is no JSON is scrubbed as text.
func ScrubJSONLines(data []byte, m *Matcher) ([]byte, int) {
	var out []byte
	total := 0
	for line := range bytes.Lines(data) {
		body := bytes.TrimRight(line, "\n")
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if len(bytes.TrimSpace(body)) == 0 || dec.Decode(&v) != nil || dec.More() {
			fixed, n := redactBytes(line, m)
			out = append(out, fixed...)
			total += n
			continue
		}
		v, n := redactValue(v, m)
		if n == 0 {
			out = append(out, line...)
			continue
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			fixed, n := redactBytes(line, m)
			out = append(out, fixed...)
			total += n
			continue
		}
		enc2 := b.Bytes()
		if !bytes.HasSuffix(line, []byte("\n")) {
			enc2 = bytes.TrimSuffix(enc2, []byte("\n"))
		}
		out = append(out, enc2...)
		total += n
	}
	return out, total
}

// redactValue replaces purged texts in every string (and key) of a
// decoded JSON value.
func redactValue(v any, m *Matcher) (any, int) {
	switch x := v.(type) {
	case string:
		b, n := redactBytes([]byte(x), m)
		return string(b), n
	case []any:
		total := 0
		for i := range x {
			var n int
			x[i], n = redactValue(x[i], m)
			total += n
		}
		return x, total
	case map[string]any:
		total := 0
		out := make(map[string]any, len(x))
		for k, val := range x {
			kb, n := redactBytes([]byte(k), m)
			val, n2 := redactValue(val, m)
			out[string(kb)] = val
			total += n + n2
		}
		return out, total
	}
	return v, 0
}
