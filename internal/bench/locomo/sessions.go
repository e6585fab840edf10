package locomo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/bench/longmemeval"
	"github.com/hivemem/hivemem/internal/palace"
)

// Roles the two speakers take in the imported sessions: LoCoMo's speaker_a
// is the generic format's user (each of their turns opens an exchange, a
// "## " section), speaker_b the assistant (their turns answer in it).
const (
	roleA = "user"
	roleB = "assistant"
)

// Haystack is a conversation as sessions for capture's generic importer,
// the path `bench longmemeval` imports its haystacks by: one session per
// LoCoMo session (named "session_<n>", stamped with its date and time in
// RFC 3339, or undated when that does not parse), one turn per utterance,
// speaker_a's as the user's and speaker_b's as the assistant's. A turn's
// text keeps its speaker's name in front, as Render writes it ("Ana: …"):
// both speakers are people, and a question names the one it asks about.
// With captions an image shared in a turn is written as in Render. It
// returns, per session, the dia ids of its turns in order.
func Haystack(s Sample, captions bool) (longmemeval.Question, [][]string) {
	q := longmemeval.Question{ID: s.ID}
	dias := make([][]string, 0, len(s.Sessions))
	for _, sess := range s.Sessions {
		ls := longmemeval.Session{ID: fmt.Sprintf("session_%d", sess.N)}
		if t, ok := parseDateTime(sess.DateTime); ok {
			ls.Date = t.Format(time.RFC3339)
		}
		var ids []string
		for _, t := range sess.Turns {
			role := roleB
			if t.Speaker == s.SpeakerA {
				role = roleA
			}
			ls.Turns = append(ls.Turns, longmemeval.Turn{Role: role, Text: t.Speaker + ": " + turnText(t, captions)})
			ids = append(ids, t.DiaID)
		}
		q.Sessions = append(q.Sessions, ls)
		dias = append(dias, ids)
	}
	return q, dias
}

// parseDateTime reads LoCoMo's "1:56 pm on 8 May, 2023" (or only its date).
func parseDateTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 January 2006", "3:04 pm on January 2, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if d := parseDate(s); d != "" {
		t, err := time.Parse("2006-01-02", d)
		return t, err == nil
	}
	return time.Time{}, false
}

// importSessions imports every conversation as its agent's session files
// (longmemeval.ImportGeneric, which mines them), maps each file's turn
// lines to their dia ids and each file to its session number in maps, and
// returns the seconds the imports took.
func importSessions(ctx context.Context, p *palace.Palace, samples []Sample, captions bool, maps *lineMaps) (float64, error) {
	h := p.Home()
	tmp, err := os.MkdirTemp("", "hivemem-locomo-input-")
	if err != nil {
		return 0, fmt.Errorf("locomo: %w", err)
	}
	defer os.RemoveAll(tmp)
	secs := 0.0
	for i, s := range samples {
		if _, err := h.SessionsDir(s.ID); err != nil {
			return secs, fmt.Errorf("locomo: sample id %q is not a usable agent id: %w", s.ID, err)
		}
		q, dias := Haystack(s, captions)
		data, err := longmemeval.GenericInput(q, true)
		if err != nil {
			return secs, fmt.Errorf("locomo %s: %w", s.ID, err)
		}
		input := filepath.Join(tmp, fmt.Sprintf("%d.jsonl", i))
		if err := os.WriteFile(input, data, 0o600); err != nil {
			return secs, fmt.Errorf("locomo %s: %w", s.ID, err)
		}
		t0 := time.Now()
		_, files, err := longmemeval.ImportGeneric(ctx, h, p, s.ID, input, q.Sessions)
		secs += time.Since(t0).Seconds()
		if err != nil {
			return secs, fmt.Errorf("locomo %s: %w", s.ID, err)
		}
		for j, ls := range q.Sessions {
			if err := maps.addSession(files[ls.ID], s.Sessions[j].N, dias[j]); err != nil {
				return secs, fmt.Errorf("locomo %s %s: %w", s.ID, ls.ID, err)
			}
		}
	}
	return secs, nil
}

// addSession maps a session's files (home-relative, first part to last):
// the n-th turn line ("- **role**: …") through them is the n-th dia id,
// and every file is session n's.
func (m *lineMaps) addSession(files []string, n int, dias []string) error {
	if len(files) == 0 && len(dias) > 0 {
		return fmt.Errorf("the import wrote no session file")
	}
	next := 0
	for _, f := range files {
		data, err := os.ReadFile(m.home.Abs(f))
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		lines := map[int]string{}
		for i, l := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(l, "- **") {
				continue
			}
			if next >= len(dias) {
				return fmt.Errorf("%s has more turns than the %d imported", f, len(dias))
			}
			lines[i+1] = dias[next]
			next++
		}
		m.bySrc[f] = lines
		m.sessOf[f] = n
	}
	if next != len(dias) {
		return fmt.Errorf("its session files hold %d turns of the %d imported", next, len(dias))
	}
	return nil
}
