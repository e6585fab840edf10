// Package transcript renders chat transcripts — dated sessions of
// role-tagged turns, as chat tools and benchmarks export them — as one
// agent's memory file: a "## YYYY-MM-DD — session <id>" section per session
// and one line per turn, so the normal miner and search path see a
// conversation the way an agent's own memory would hold it.
package transcript

import (
	"fmt"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
)

// Turn is one utterance.
type Turn struct {
	Role string // "user", "assistant", ...
	Text string
}

// Session is one dated conversation.
type Session struct {
	ID    string
	Date  string // YYYY-MM-DD, "" when unknown
	Turns []Turn
}

// Options selects what a rendered file keeps.
type Options struct {
	// Roles are the roles whose turns are written; nil keeps every turn.
	Roles []string
	// Labels prefixes each line with its role ("user: …"), as a
	// transcript of several speakers needs.
	Labels bool
}

func (o Options) keeps(role string) bool {
	if o.Roles == nil {
		return true
	}
	for _, r := range o.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// Heading is the section heading of a session.
func Heading(s Session) string {
	date := s.Date
	if date == "" {
		date = "undated"
	}
	return date + " — session " + s.ID
}

// Render writes sessions as a memory file titled title. Each turn becomes
// one line (its white space folded); turns that are empty once folded are
// left out, and a session with no kept turn keeps its heading alone. The
// text is data: a turn can never change the file's structure (see
// memfile.AppendSection). A session id that cannot stand in a heading (a
// line break, say) is an error.
func Render(title string, sessions []Session, opts Options) ([]byte, error) {
	var b strings.Builder
	b.WriteString("# Memory — " + Line(title) + "\n")
	var body strings.Builder
	for _, s := range sessions {
		body.Reset()
		for _, t := range s.Turns {
			if !opts.keeps(t.Role) {
				continue
			}
			text := Line(t.Text)
			if text == "" {
				continue
			}
			if opts.Labels {
				body.WriteString(Line(t.Role) + ": ")
			}
			body.WriteString(text)
			body.WriteByte('\n')
		}
		sec, err := memfile.AppendSection(nil, Heading(s), body.String())
		if err != nil {
			return nil, fmt.Errorf("transcript: session %q: %w", s.ID, err)
		}
		b.WriteByte('\n')
		b.Write(sec)
	}
	return []byte(b.String()), nil
}

// Line makes text one storable line: invalid UTF-8 becomes U+FFFD, NUL
// bytes go, and every run of white space (line breaks included) becomes
// one space.
func Line(text string) string {
	text = strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\x00", "")
	return strings.Join(strings.Fields(text), " ")
}

// ParseDate reads the date of a timestamp such as "2023/05/20 (Sat) 02:21",
// "2023-05-20T02:21:00Z" or "2023-05-20" as YYYY-MM-DD; "" when the text
// starts with no calendar date.
func ParseDate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 10 {
		return ""
	}
	d := strings.ReplaceAll(s[:10], "/", "-")
	if _, err := time.Parse("2006-01-02", d); err != nil {
		return ""
	}
	return d
}

// SessionID returns the session id of a heading Render wrote ("" and false
// for any other heading).
func SessionID(heading string) (string, bool) {
	i := strings.LastIndex(heading, " — session ")
	if i < 0 {
		return "", false
	}
	id := heading[i+len(" — session "):]
	return id, id != ""
}
