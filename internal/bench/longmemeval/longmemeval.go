// Package longmemeval runs the LongMemEval retrieval benchmark (Wu et al.
// 2024) through the normal palace: each question's haystack of sessions is
// imported as one agent's session files by the capture importer (format
// generic, the path conversations take into memory), all of them in one
// palace so that sessions shared between haystacks share the embedding
// cache, mined by the miner and queried by the search path scoped to the
// question's wing; sessions are ranked by their best drawer and scored
// against the question's answer sessions.
package longmemeval

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Question is one LongMemEval question with its haystack.
type Question struct {
	ID       string
	Type     string
	Text     string
	Date     string // question_date as given
	AsOf     string // the day of Date, YYYY-MM-DD ("" when the file has none)
	Answers  []string
	Sessions []Session // haystack, in the file's order; IDs as given
	Repeated int       // haystack sessions left out as repeats of an earlier one (same id)
}

// Session is one haystack session.
type Session struct {
	ID    string
	Date  string // haystack_dates as given ("2023/05/20 (Sat) 02:21"), "" when the file has none
	Turns []Turn
}

// Turn is one utterance of a session.
type Turn struct {
	Role string // "user", "assistant"
	Text string
}

// Abstention reports whether the question is an abstention question (its id
// ends in "_abs": the haystack does not hold the answer).
func (q Question) Abstention() bool { return strings.HasSuffix(q.ID, "_abs") }

// LoadOptions bounds what Load keeps.
type LoadOptions struct {
	// Limit keeps this many questions, spread evenly over the file (its
	// questions come grouped by type, so the first N would be one type);
	// 0 keeps all.
	Limit          int
	AssistantTurns bool // keep assistant turns (otherwise only user turns are kept, to save memory)
}

type rawQuestion struct {
	ID       string      `json:"question_id"`
	Type     string      `json:"question_type"`
	Question string      `json:"question"`
	Date     string      `json:"question_date"`
	Answers  []string    `json:"answer_session_ids"`
	IDs      []string    `json:"haystack_session_ids"`
	Dates    []string    `json:"haystack_dates"`
	Sessions [][]rawTurn `json:"haystack_sessions"`
}

type rawTurn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Load reads a LongMemEval file (a JSON list of questions), gzipped when it
// starts with the gzip magic. It streams the list, so only the questions
// (and turns) kept are held in memory.
func Load(path string, opts LoadOptions) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("longmemeval: %w", err)
	}
	defer f.Close()
	qs, err := decode(f, opts)
	if err != nil {
		return nil, fmt.Errorf("longmemeval %s: %w", path, err)
	}
	return qs, nil
}

func decode(r io.Reader, opts LoadOptions) ([]Question, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	dec := json.NewDecoder(br)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not a LongMemEval question list: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("not a LongMemEval question list (want a JSON array)")
	}
	var out []Question
	seen := map[string]bool{}
	for dec.More() {
		var raw rawQuestion
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("question %d: %w", len(out)+1, err)
		}
		q, err := convert(raw, opts)
		if err != nil {
			return nil, fmt.Errorf("question %d: %w", len(out)+1, err)
		}
		if seen[q.ID] {
			return nil, fmt.Errorf("question %d: duplicate question_id %q", len(out)+1, q.ID)
		}
		seen[q.ID] = true
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, errors.New("no questions")
	}
	return spread(out, opts.Limit), nil
}

// spread keeps n of qs at even steps through the list, first included.
func spread(qs []Question, n int) []Question {
	if n <= 0 || n >= len(qs) {
		return qs
	}
	out := make([]Question, 0, n)
	for i := range n {
		out = append(out, qs[i*len(qs)/n])
	}
	return out
}

func convert(r rawQuestion, opts LoadOptions) (Question, error) {
	q := Question{ID: r.ID, Type: r.Type, Text: r.Question, Date: r.Date, Answers: r.Answers}
	asOf, err := questionDay(r.Date)
	switch {
	case q.ID == "":
		return q, errors.New("no question_id")
	case err != nil:
		return q, fmt.Errorf("%s: %w", q.ID, err)
	case strings.TrimSpace(q.Text) == "":
		return q, fmt.Errorf("%s: empty question", q.ID)
	case len(r.IDs) != len(r.Sessions):
		return q, fmt.Errorf("%s: %d haystack_session_ids for %d haystack_sessions", q.ID, len(r.IDs), len(r.Sessions))
	case len(r.Dates) != 0 && len(r.Dates) != len(r.Sessions):
		return q, fmt.Errorf("%s: %d haystack_dates for %d haystack_sessions", q.ID, len(r.Dates), len(r.Sessions))
	}
	q.AsOf = asOf
	ids := map[string]bool{}
	for i, sess := range r.Sessions {
		s := Session{ID: r.IDs[i]}
		if s.ID == "" {
			return q, fmt.Errorf("%s: haystack session %d has no id", q.ID, i+1)
		}
		if ids[s.ID] {
			// The published haystacks repeat a filler session now and
			// then: one copy is the session.
			q.Repeated++
			continue
		}
		ids[s.ID] = true
		if len(r.Dates) > 0 {
			s.Date = r.Dates[i]
		}
		for _, t := range sess {
			if t.Role != "user" && !opts.AssistantTurns {
				continue
			}
			s.Turns = append(s.Turns, Turn{Role: t.Role, Text: t.Content})
		}
		q.Sessions = append(q.Sessions, s)
	}
	return q, nil
}

// Alias is the name a session goes by in the imported input (its generic
// "session" field, so its session file's name and header): a digest of its
// id. LongMemEval's ids say where a session came from ("answer_…" for
// evidence, "sharegpt_…" for filler), which a ranker must not see; the
// digest keeps a session's file — and so its drawers' text and their
// embedding-cache key — the same in every haystack that holds it.
func Alias(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:5])
}

// questionDay is the day (YYYY-MM-DD) of a question_date such as
// "2023/05/20 (Sat) 02:21"; "" for none.
func questionDay(date string) (string, error) {
	if date == "" {
		return "", nil
	}
	for _, layout := range []string{"2006/01/02 (Mon) 15:04", "2006/01/02 15:04", time.DateOnly} {
		if t, err := time.Parse(layout, date); err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", fmt.Errorf("question_date %q is not a date (want such as 2023/05/20 (Sat) 02:21)", date)
}
