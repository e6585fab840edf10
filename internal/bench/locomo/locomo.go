// Package locomo runs the LoCoMo retrieval benchmark through the normal
// palace: each conversation is rendered as one agent's memory file (a
// section per session), mined by the miner and queried by the search path,
// and session/turn recall, MRR and latency are reported per search mode.
package locomo

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sample is one conversation with its questions.
type Sample struct {
	ID       string
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []Question
}

// AsOf is the day s's questions are asked: LoCoMo gives no date for a
// question, and they are asked after the conversation, so the day of its
// last dated session (YYYY-MM-DD; "" when no session's date parses).
func (s Sample) AsOf() string {
	last := ""
	for _, sess := range s.Sessions {
		last = max(last, sess.Date)
	}
	return last
}

// Session is one dated conversation session.
type Session struct {
	N        int
	DateTime string // as given, e.g. "1:56 pm on 8 May, 2023"
	Date     string // YYYY-MM-DD when DateTime parses
	Turns    []Turn
}

// Turn is one utterance.
type Turn struct {
	Speaker string
	DiaID   string // "D<session>:<turn>"
	Text    string
	// Caption describes an image shared in the turn (LoCoMo's BLIP caption),
	// "" when none was shared.
	Caption string
}

// Question is one QA item with its evidence turns, normalised.
type Question struct {
	Text     string
	Category int
	// Answer is the gold answer as LoCoMo gives it (a number is written in
	// decimal); "" for the adversarial category, which has none.
	Answer     string
	Evidence   []string // normalised dia ids
	Unresolved []string // evidence entries that name no turn of the conversation
}

type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string          `json:"question"`
		Answer   json.RawMessage `json:"answer"`
		Evidence []string        `json:"evidence"`
		Category json.RawMessage `json:"category"`
	} `json:"qa"`
}

var (
	sessionKeyRE = regexp.MustCompile(`^session_(\d+)$`)
	evidenceRE   = regexp.MustCompile(`D:?(\d+):(\d+)`)
)

// Load reads a LoCoMo JSON file (a list of samples).
func Load(path string) ([]Sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	var raws []rawSample
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("locomo %s: not a LoCoMo sample list: %w", path, err)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("locomo %s: no samples", path)
	}
	out := make([]Sample, 0, len(raws))
	for _, r := range raws {
		s, err := convert(r)
		if err != nil {
			return nil, fmt.Errorf("locomo %s: %w", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func convert(r rawSample) (Sample, error) {
	s := Sample{ID: r.SampleID}
	if s.ID == "" {
		return s, fmt.Errorf("sample without sample_id")
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(r.Conversation[k], &v)
		return v
	}
	s.SpeakerA, s.SpeakerB = str("speaker_a"), str("speaker_b")
	for k, raw := range r.Conversation {
		m := sessionKeyRE.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		var turns []struct {
			Speaker string          `json:"speaker"`
			DiaID   string          `json:"dia_id"`
			Text    string          `json:"text"`
			Caption json.RawMessage `json:"blip_caption"`
		}
		if err := json.Unmarshal(raw, &turns); err != nil {
			return s, fmt.Errorf("sample %s %s: %w", s.ID, k, err)
		}
		sess := Session{N: n, DateTime: str(k + "_date_time")}
		sess.Date = parseDate(sess.DateTime)
		for _, t := range turns {
			sess.Turns = append(sess.Turns, Turn{Speaker: t.Speaker, DiaID: t.DiaID, Text: t.Text, Caption: caption(t.Caption)})
		}
		s.Sessions = append(s.Sessions, sess)
	}
	sort.Slice(s.Sessions, func(i, j int) bool { return s.Sessions[i].N < s.Sessions[j].N })
	known := map[string]bool{}
	for _, sess := range s.Sessions {
		for _, t := range sess.Turns {
			known[t.DiaID] = true
		}
	}
	for _, q := range r.QA {
		cat, _ := strconv.Atoi(strings.Trim(string(q.Category), `"`))
		qq := Question{Text: q.Question, Category: cat, Answer: answerText(q.Answer)}
		seen := map[string]bool{}
		for _, e := range q.Evidence {
			ms := evidenceRE.FindAllStringSubmatch(e, -1)
			if len(ms) == 0 {
				qq.Unresolved = append(qq.Unresolved, e)
			}
			for _, m := range ms {
				id := "D" + m[1] + ":" + m[2]
				if !known[id] {
					qq.Unresolved = append(qq.Unresolved, e)
					continue
				}
				if !seen[id] {
					seen[id] = true
					qq.Evidence = append(qq.Evidence, id)
				}
			}
		}
		s.QA = append(s.QA, qq)
	}
	return s, nil
}

// answerText reads a gold answer: a JSON string as is, a number in its
// JSON spelling, anything else (absent, null) as no answer.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// caption reads a turn's image caption; anything but a JSON string (absent,
// null, another shape) is no caption rather than an error, since the
// caption only adds text to a turn.
func caption(raw json.RawMessage) string {
	var c string
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	return strings.Join(strings.Fields(c), " ")
}

// parseDate turns "1:56 pm on 8 May, 2023" into "2023-05-08".
func parseDate(s string) string {
	if i := strings.Index(s, " on "); i >= 0 {
		s = s[i+4:]
	}
	for _, layout := range []string{"2 January, 2006", "2 January 2006", "January 2, 2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return ""
}

// Render writes a conversation as one agent's memory file: a section per
// session headed by its date, one line per turn keeping its dia id. With
// captions, an image shared in a turn is written into its line as its
// caption, as LoCoMo itself gives images to text-only models: an agent's
// memory of the conversation holds what the picture showed, and without it
// a turn such as "Here's our latest work!" says nothing of a painting. It
// returns the file and, for each 1-based line, the dia id on it.
func Render(s Sample, captions bool) ([]byte, map[int]string) {
	var b strings.Builder
	lines := map[int]string{}
	line := 1
	w := func(str string) {
		b.WriteString(str)
		line += strings.Count(str, "\n")
	}
	w(fmt.Sprintf("# Memory — %s (%s)\n\nConversation between %s and %s.\n", s.ID, s.ID, s.SpeakerA, s.SpeakerB))
	for _, sess := range s.Sessions {
		date := sess.Date
		if date == "" {
			date = "undated"
		}
		w(fmt.Sprintf("\n## %s — session %d (%s)\n", date, sess.N, sess.DateTime))
		for _, t := range sess.Turns {
			lines[line] = t.DiaID
			w(fmt.Sprintf("[%s] %s: %s\n", t.DiaID, t.Speaker, turnText(t, captions)))
		}
	}
	return []byte(b.String()), lines
}

// turnText is a turn's text on one line and, with captions, the image it
// shared written after it.
func turnText(t Turn, captions bool) string {
	text := strings.ReplaceAll(t.Text, "\n", " ")
	if captions && t.Caption != "" {
		text += " [shared an image: " + t.Caption + "]"
	}
	return text
}

// SessionOf returns the session number of a dia id ("D3:7" → 3).
func SessionOf(dia string) int {
	m := evidenceRE.FindStringSubmatch(dia)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
