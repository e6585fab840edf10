package longmemeval

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

type turn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer,omitempty"`
}

type question struct {
	ID       string   `json:"question_id"`
	Type     string   `json:"question_type"`
	Question string   `json:"question"`
	Answer   any      `json:"answer"`
	Date     string   `json:"question_date"`
	Answers  []string `json:"answer_session_ids"`
	IDs      []string `json:"haystack_session_ids"`
	Dates    []string `json:"haystack_dates"`
	Sessions [][]turn `json:"haystack_sessions"`
}

// haystack builds a question whose sessions each talk of one topic; the
// answer sessions are those of the answer topics.
func haystack(id, typ, text string, topics []string, answers ...int) question {
	q := question{ID: id, Type: typ, Question: text, Answer: 3, Date: "2023/06/01 (Thu) 10:00"}
	for i, t := range topics {
		sid := id + "_s" + string(rune('a'+i))
		q.IDs = append(q.IDs, sid)
		q.Dates = append(q.Dates, "2023/05/1"+string(rune('0'+i))+" (Sat) 09:00")
		q.Sessions = append(q.Sessions, []turn{
			{Role: "user", Content: "Let us talk about " + t + " today."},
			{Role: "assistant", Content: "Sure, " + t + " is a fine subject. Also: assistant" + t + "detail."},
		})
		for _, a := range answers {
			if a == i {
				q.Answers = append(q.Answers, sid)
			}
		}
	}
	return q
}

func dataset() []question {
	topics := []string{"gardening tomatoes", "sailing boats", "baking sourdough", "chess openings"}
	return []question{
		haystack("q1", "single-session-user", "What did I say about sourdough?", topics, 2),
		haystack("q2", "multi-session", "Tomatoes or chess, which did I mention?", topics, 0, 3),
		haystack("q3_abs", "single-session-user", "What did I say about sailing?", topics, 1),
		// Only the assistant's turn has the word: found only with assistant turns.
		haystack("q4", "single-session-assistant", "What was the assistantchess openingsdetail you gave?", topics, 3),
	}
}

func write(t *testing.T, qs []question, gz bool) string {
	t.Helper()
	data, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lme.json")
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		data, path = b.Bytes(), path+".gz"
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadReadsPlainAndGzippedFiles(t *testing.T) {
	for _, gz := range []bool{false, true} {
		qs, err := Load(write(t, dataset(), gz), LoadOptions{})
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if len(qs) != 4 || qs[1].ID != "q2" || len(qs[1].Answers) != 2 || len(qs[1].Sessions) != 4 {
			t.Fatalf("gzip %v: %+v", gz, qs)
		}
		s := qs[0].Sessions[2]
		if s.ID != "q1_sc" || s.Date != "2023/05/12 (Sat) 09:00" || len(s.Turns) != 1 || s.Turns[0].Role != "user" {
			t.Fatalf("gzip %v: session %+v (user turns only by default)", gz, s)
		}
		if qs[0].Date != "2023/06/01 (Thu) 10:00" || qs[0].AsOf != "2023-06-01" {
			t.Fatalf("gzip %v: question date %q, as of %q; want the day 2023-06-01", gz, qs[0].Date, qs[0].AsOf)
		}
		if !qs[2].Abstention() || qs[0].Abstention() || PaperView(qs[3]) || !PaperView(qs[0]) {
			t.Fatalf("abstention/paper view wrong")
		}
	}
	qs, err := Load(write(t, dataset(), false), LoadOptions{AssistantTurns: true})
	if err != nil || len(qs[0].Sessions[0].Turns) != 2 {
		t.Fatalf("assistant turns not kept: %v %+v", err, qs)
	}
}

func TestLoadLimitSpreadsOverTheFile(t *testing.T) {
	qs, err := Load(write(t, dataset(), false), LoadOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "q1" || qs[1].ID != "q3_abs" {
		t.Fatalf("limit 2 kept %v, want q1 and q3_abs", []string{qs[0].ID, qs[1].ID})
	}
}

func TestLoadKeepsOneCopyOfARepeatedSession(t *testing.T) {
	qs := dataset()[:1]
	q := &qs[0]
	q.IDs = append(q.IDs, q.IDs[0])
	q.Dates = append(q.Dates, q.Dates[0])
	q.Sessions = append(q.Sessions, q.Sessions[0])
	got, err := Load(write(t, qs, false), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0].Sessions) != 4 || got[0].Repeated != 1 {
		t.Fatalf("%d sessions, %d repeated; want 4 and 1", len(got[0].Sessions), got[0].Repeated)
	}
}

func TestLoadRefusesBadInput(t *testing.T) {
	mismatch := dataset()[:1]
	mismatch[0].IDs = mismatch[0].IDs[:2]
	dup := append(dataset()[:1], dataset()[0])
	noID := dataset()[:1]
	noID[0].ID = ""
	badDate := dataset()[:1]
	badDate[0].Date = "June 1st"
	dir := t.TempDir()
	notList := filepath.Join(dir, "obj.json")
	os.WriteFile(notList, []byte(`{"question_id": "x"}`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`[]`), 0o644)
	badGz := filepath.Join(dir, "bad.json.gz")
	os.WriteFile(badGz, []byte{0x1f, 0x8b, 1, 2, 3}, 0o644)
	tests := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "missing.json"), "no such file"},
		{"not a list", notList, "not a LongMemEval question list"},
		{"empty list", empty, "no questions"},
		{"truncated gzip", badGz, "longmemeval"},
		{"ids and sessions disagree", write(t, mismatch, false), "2 haystack_session_ids for 4 haystack_sessions"},
		{"duplicate question", write(t, dup, false), `duplicate question_id "q1"`},
		{"no question id", write(t, noID, false), "no question_id"},
		{"question date not a date", write(t, badDate, false), `q1: question_date "June 1st" is not a date`},
	}
	for _, tt := range tests {
		_, err := Load(tt.path, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestScore(t *testing.T) {
	ideal2 := 1 + 1/math.Log2(3)
	tests := []struct {
		name     string
		ranked   []string
		answers  []string
		any, all [4]float64
		ndcg, rr float64
	}{
		{"first", []string{"a", "b"}, []string{"a"}, [4]float64{1, 1, 1, 1}, [4]float64{1, 1, 1, 1}, 1, 1},
		{"second of two at 2 and 4", []string{"x", "a", "y", "b"}, []string{"a", "b"}, [4]float64{0, 1, 1, 1}, [4]float64{0, 0, 1, 1},
			(1/math.Log2(3) + 1/math.Log2(5)) / ideal2, 0.5},
		{"missing", []string{"x", "y"}, []string{"a"}, [4]float64{}, [4]float64{}, 0, 0},
		{"at rank 7", []string{"1", "2", "3", "4", "5", "6", "a"}, []string{"a"}, [4]float64{0, 0, 0, 1}, [4]float64{0, 0, 0, 1}, 1 / math.Log2(8), 1.0 / 7},
		{"no answer sessions", nil, nil, [4]float64{1, 1, 1, 1}, [4]float64{1, 1, 1, 1}, 1, 1},
	}
	for _, tt := range tests {
		s := score(tt.ranked, tt.answers)
		if s.any != tt.any || s.all != tt.all || math.Abs(s.ndcg-tt.ndcg) > 1e-9 || math.Abs(s.rr-tt.rr) > 1e-9 {
			t.Errorf("%s: got any %v all %v ndcg %.4f rr %.4f; want any %v all %v ndcg %.4f rr %.4f",
				tt.name, s.any, s.all, s.ndcg, s.rr, tt.any, tt.all, tt.ndcg, tt.rr)
		}
	}
}

func openPalace(t *testing.T) *palace.Palace {
	t.Helper()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := palace.New(ctx, h, st, nil, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunLexical runs the benchmark through a lexical palace: questions
// whose words are in their answer sessions' user turns find them first;
// the one whose words only the assistant said finds it only with
// assistant turns rendered.
func TestRunLexical(t *testing.T) {
	qs, err := Load(write(t, dataset(), true), LoadOptions{AssistantTurns: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, withAssistant := range []bool{false, true} {
		var phases []string
		p := openPalace(t)
		res, err := Run(context.Background(), p, qs, Options{Dataset: "gen", AssistantTurns: withAssistant,
			Progress: func(phase string, done, total int) {
				if len(phases) == 0 || phases[len(phases)-1] != phase {
					phases = append(phases, phase)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		m, ok := res.Modes[palace.ModeLexical]
		if !ok || len(res.Modes) != 1 {
			t.Fatalf("modes = %v, want lexical only without an embedder", res.Modes)
		}
		if res.Questions != 4 || res.Abstention != 1 || res.Sessions != 16 || res.DistinctSessions != 16 || res.Drawers < 16 {
			t.Fatalf("counts: %+v", res)
		}
		if strings.Join(phases, ",") != PhaseMine+","+PhaseQuery {
			t.Errorf("phases %v", phases)
		}
		q4 := 0.0
		if withAssistant {
			q4 = 1
		}
		if got := m.ByType["single-session-assistant"].RecallAny10; got != q4 {
			t.Errorf("assistant turns %v: the assistant-evidence question scores %.0f, want %.0f", withAssistant, got, q4)
		}
		if s := m.Paper; s.Questions != 2 || s.RecallAny1 != 1 || s.RecallAll5 != 1 || s.NDCG10 != 1 || s.MRR != 1 {
			t.Errorf("paper view %+v, want q1 and q2 found first", s)
		}
		if m.NoAbstention.Questions != 3 || m.Scores.Questions != 4 || m.ByType["single-session-user"].Questions != 2 {
			t.Errorf("views: all %d, no abstention %d", m.Scores.Questions, m.NoAbstention.Questions)
		}
		// per question, in the order run: q1's one answer session first
		if pq := m.PerQuestion; len(pq) != 4 || pq[0].ID != "q1" || pq[0].Type != "single-session-user" || len(pq[0].Ranks) != 1 || pq[0].Ranks[0] != 1 {
			t.Errorf("per question %+v, want 4 with q1's answer session at rank 1", pq)
		}
		// Each session is one session file of the question's agent, named
		// (file and header) by its alias, never by the data's ids; a turn
		// is a line of it, assistant turns only when asked for.
		dir, _ := p.Home().SessionsDir("q1")
		files, err := filepath.Glob(filepath.Join(dir, "*.md"))
		if err != nil || len(files) != 4 {
			t.Fatalf("session files of q1: %v (%v), want 4", files, err)
		}
		var all strings.Builder
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all.Write(data)
		}
		text := all.String()
		if strings.Contains(text, "q1_s") || !strings.Contains(text, "id="+Alias("q1_sa")+" -->") {
			t.Errorf("session files of q1 do not name sessions by alias:\n%s", text)
		}
		if !strings.Contains(text, "## 2023-05-10 09:00 — Let us talk about gardening tomatoes today.\n- **user**: Let us talk about gardening tomatoes today.\n") {
			t.Errorf("session files of q1 lack the dated exchange of session a:\n%s", text)
		}
		if got := strings.Contains(text, "- **assistant**: Sure, gardening tomatoes"); got != withAssistant {
			t.Errorf("assistant turns %v: assistant line in the session files = %v\n%s", withAssistant, got, text)
		}
	}
}
