// Package capture turns conversations into memory: it parses transcripts
// and exports (Claude Code and Codex session logs, ChatGPT and Claude
// exports, generic chat JSON, plain transcripts) into one neutral model,
// renders them as markdown session files under
// hive/agents/<id>/sessions/, and imports them idempotently (Import).
// Every front end (the import command, the hooks, MemPalace's
// `mine --mode convos`) calls Import.
package capture

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Roles of a turn, as rendered.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleSystem     = "system"
	RoleToolCall   = "tool call"
	RoleToolResult = "tool result"
	RoleToolError  = "tool error"
	RoleSummary    = "summary"
)

// Turn is one utterance of a conversation.
type Turn struct {
	// Key is stable across re-reads of the same (possibly grown) source:
	// a message id where the format has one, else its position. Import
	// skips turns whose key it has written before.
	Key  string
	Role string
	Text string
	// Time is when the turn was said; zero when the source does not say.
	Time time.Time
	// Sidechain marks a sub-agent's turn (Claude Code's isSidechain).
	Sidechain bool
}

// short reports whether the turn is reduced to one short line (tool calls,
// tool results, summaries).
func (t Turn) short() bool {
	switch t.Role {
	case RoleToolCall, RoleToolResult, RoleToolError, RoleSummary:
		return true
	}
	return t.Sidechain
}

// Conversation is one session, thread or chat, in source order.
type Conversation struct {
	Format string
	// ID names the conversation within its format (a session id, a
	// conversation uuid, a file name); with Format it picks the session file.
	ID    string
	Title string
	Turns []Turn
}

// Start is the time of the first timed turn, zero if none is timed.
func (c Conversation) Start() time.Time {
	for _, t := range c.Turns {
		if !t.Time.IsZero() {
			return t.Time
		}
	}
	return time.Time{}
}

// Last is the time of the last timed turn, else fallback.
func (c Conversation) Last(fallback time.Time) time.Time {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		if !c.Turns[i].Time.IsZero() {
			return c.Turns[i].Time
		}
	}
	return fallback
}

// ParseError names the file and line of malformed input.
type ParseError struct {
	File string
	Line int // 1-based; 0 when unknown
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func errAt(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Parser reads one source file (its name for errors and defaults, and its
// bytes) into conversations.
type Parser func(name string, data []byte) ([]Conversation, error)

var parsers = map[string]Parser{
	"claude-code": parseClaudeCode,
	"codex":       parseCodex,
	"chatgpt":     parseChatGPT,
	"claude-ai":   parseClaudeAI,
	"generic":     parseGeneric,
	"markdown":    parseTranscript,
	"text":        parseTranscript,
}

// Formats lists the format names Parse accepts, sorted.
func Formats() []string {
	var out []string
	for k := range parsers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Parse reads data (from the file called name) in the given format.
// Conversations without a turn are dropped.
func Parse(format, name string, data []byte) ([]Conversation, error) {
	p, ok := parsers[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats(), ", "))
	}
	convs, err := p(name, data)
	if err != nil {
		return nil, err
	}
	out := convs[:0]
	for _, c := range convs {
		c.Format = format
		if format == "text" {
			c.Format = "markdown" // the same parser: one session file for both names
		}
		if len(c.Turns) > 0 {
			out = append(out, c)
		}
	}
	return slices.Clip(out), nil
}

// normRole maps the role names formats use onto ours; "" if unknown.
func normRole(r string) string {
	switch strings.ToLower(strings.TrimSpace(r)) {
	case "user", "human", "me", "you":
		return RoleUser
	case "assistant", "ai", "bot", "model", "claude", "chatgpt", "gpt", "codex":
		return RoleAssistant
	case "system", "developer":
		return RoleSystem
	case "tool", "function":
		return RoleToolResult
	}
	return ""
}

// cleanText makes source text safe for a memory file: valid UTF-8, no NUL
// or other control characters but tab and newline, "\n" line endings.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	// Unicode line and paragraph separators would read as line breaks to
	// some tools and not to others.
	s = strings.NewReplacer("\u2028", "\n", "\u2029", "\n", "\u0085", "\n").Replace(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\uFEFF' {
			return -1
		}
		return r
	}, s)
}

// oneLine collapses text to one line of at most n runes, with "…" when cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(cleanText(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// parseTime reads the timestamp forms the formats use: RFC 3339 (with or
// without fraction or zone), a few common layouts, or Unix seconds.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006/01/02 (Mon) 15:04", "2006/01/02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// unixTime converts seconds since the epoch (with a fraction) to a time.
func unixTime(sec float64) (time.Time, bool) {
	if sec <= 0 || sec > 1e11 || sec != sec {
		return time.Time{}, false
	}
	s := int64(sec)
	return time.Unix(s, int64((sec-float64(s))*1e9)).UTC(), true
}

// baseName is a file name without directory and extension, the default
// conversation id of formats that have none.
func baseName(name string) string {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}
