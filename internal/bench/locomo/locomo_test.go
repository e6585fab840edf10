package locomo

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
)

// mustLoad loads a LoCoMo fixture, failing the test if it does not load.
func mustLoad(t *testing.T, path string) []Sample {
	t.Helper()
	ss, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func TestLoadNormalisesEvidence(t *testing.T) {
	ss := mustLoad(t, "testdata/tiny.json")
	s := ss[0]
	if len(s.Sessions) != 3 || s.Sessions[0].Date != "2023-05-08" || s.Sessions[2].Date != "2023-07-20" {
		t.Fatalf("sessions: %+v", s.Sessions)
	}
	want := [][]string{{"D1:1"}, {"D2:1", "D2:2"}, {"D3:1"}, nil, nil}
	for i, q := range s.QA {
		if !reflect.DeepEqual(q.Evidence, want[i]) {
			t.Errorf("question %d evidence %v, want %v", i, q.Evidence, want[i])
		}
	}
	if got := s.QA[3].Unresolved; len(got) != 1 || got[0] != "D9:9" {
		t.Errorf("unresolved evidence = %v, want [D9:9]", got)
	}
	if _, err := Load("testdata/missing.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// A conversation's questions are asked as of its last dated session,
// whatever the order its sessions are listed in.
func TestSampleAsOfIsTheLastSessionsDay(t *testing.T) {
	if got := mustLoad(t, "testdata/tiny.json")[0].AsOf(); got != "2023-07-20" {
		t.Errorf("tiny.json as of %q, want its last session's day 2023-07-20", got)
	}
	for _, tc := range []struct {
		dates []string
		want  string
	}{
		{[]string{"2023-05-08", "2023-07-20", "2023-06-02"}, "2023-07-20"},
		{[]string{"2023-05-08", ""}, "2023-05-08"}, // a date that did not parse
		{[]string{""}, ""},
		{nil, ""},
	} {
		var s Sample
		for _, d := range tc.dates {
			s.Sessions = append(s.Sessions, Session{Date: d})
		}
		if got := s.AsOf(); got != tc.want {
			t.Errorf("sessions dated %q: as of %q, want %q", tc.dates, got, tc.want)
		}
	}
}

func TestRenderKeepsDiaIDs(t *testing.T) {
	ss := mustLoad(t, "testdata/tiny.json")
	data, lines := Render(ss[0], true)
	text := strings.Split(string(data), "\n")
	for n, dia := range lines {
		if !strings.HasPrefix(text[n-1], "["+dia+"]") {
			t.Errorf("line %d = %q, want dia id %s", n, text[n-1], dia)
		}
	}
	if !strings.Contains(string(data), "## 2023-06-02 — session 2 (10:00 am on 2 June, 2023)") {
		t.Errorf("session heading missing:\n%s", data)
	}
}

func TestRenderCaptions(t *testing.T) {
	ss := mustLoad(t, "testdata/tiny.json")
	tests := []struct {
		captions bool
		want     string
	}{
		// Whitespace in a caption (a newline included) is folded, so the
		// turn stays one line.
		{true, "[D3:2] Ben: Here is mine from last weekend. [shared an image: a photo of a red kayak on a river]\n"},
		{false, "[D3:2] Ben: Here is mine from last weekend.\n"},
	}
	for _, tt := range tests {
		data, _ := Render(ss[0], tt.captions)
		if !strings.Contains(string(data), tt.want) {
			t.Errorf("captions=%v: %q not in\n%s", tt.captions, tt.want, data)
		}
		// A null caption is no caption.
		if !strings.Contains(string(data), "[D3:3] Ana: Nice!\n") {
			t.Errorf("captions=%v: null caption changed the turn:\n%s", tt.captions, data)
		}
	}
}

// TestRunLexical runs the whole benchmark on the tiny set: the questions
// whose words appear in their evidence turn must be found first.
func TestRunLexical(t *testing.T) {
	ss := mustLoad(t, "testdata/tiny.json")
	p, _ := hometest.Palace(t, hometest.New(t), nil, palace.Options{})
	res, err := Run(context.Background(), p, ss, Options{Dataset: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := res.Modes[palace.ModeLexical]
	if !ok || len(res.Modes) != 1 {
		t.Fatalf("modes = %v, want lexical only without an embedder", res.Modes)
	}
	if res.Questions != 5 || m.Questions != 5 || m.UnresolvedEvidences != 1 {
		t.Fatalf("counts: %+v / %+v", res, m)
	}
	// Questions 1-3 find their session first; 4 and 5 have no usable
	// evidence and count 1.0, as published figures do.
	if m.SessionRecall5 != 1 || m.MRR != 1 {
		t.Fatalf("session recall@5 %.3f, MRR %.3f; want 1 and 1", m.SessionRecall5, m.MRR)
	}
	if m.ByCategory["4"].Questions != 2 || m.TurnRecall10 < 0.8 {
		t.Fatalf("by category %+v, turn recall@10 %.3f", m.ByCategory, m.TurnRecall10)
	}
	// Each question's evidence sessions' ranks, in the order asked: the
	// first three find their one session first, the last two have none.
	if len(m.PerQuestion) != 5 {
		t.Fatalf("per question: %+v", m.PerQuestion)
	}
	for i, q := range m.PerQuestion {
		want := []int{1}
		if i >= 3 {
			want = []int{}
		}
		if q.Sample != "conv-t1" || q.Index != i || q.Category != ss[0].QA[i].Category || !slices.Equal(q.Ranks, want) {
			t.Errorf("per question %d: %+v, want sample conv-t1, index %d, category %d, ranks %v", i, q, i, ss[0].QA[i].Category, want)
		}
	}
}

// A time a question names is counted from its conversation's last
// session, so "seven weeks ago" (of 20 July 2023: 1 June) finds session 2,
// of 2 June; searched as of today (NoQuestionDate) it points at no session,
// and its words find the turn that says "last week" instead.
func TestRunSearchesAsOfTheLastSession(t *testing.T) {
	for _, tc := range []struct {
		noDate bool
		want   float64 // session recall@5 of the question
	}{
		{false, 1},
		{true, 0},
	} {
		ss := mustLoad(t, "testdata/tiny.json")
		ss[0].QA = []Question{{Text: "what did we do seven weeks ago", Category: 2, Evidence: []string{"D2:1"}}}
		p, _ := hometest.Palace(t, hometest.New(t), nil, palace.Options{})
		res, err := Run(context.Background(), p, ss, Options{Dataset: "tiny", NoQuestionDate: tc.noDate})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Modes[palace.ModeLexical].SessionRecall5; got != tc.want || res.NoQuestionDate != tc.noDate {
			t.Errorf("NoQuestionDate %v: session recall@5 %v (result says %v), want %v", tc.noDate, got, res.NoQuestionDate, tc.want)
		}
	}
}

// TestMeasureCoverage: answers are normalised as LoCoMo's evaluation does
// and must appear as whole words; only categories 1-4 with an answer count;
// the file and the condensed region are scored apart.
func TestMeasureCoverage(t *testing.T) {
	for in, want := range map[string]string{
		"The Bach partita, in D minor!": "bach partita in d minor",
		"7 May 2023":                    "7 may 2023",
		"an apple and a pear":           "apple pear",
		"":                              "",
	} {
		if got := NormalizeAnswer(in); got != want {
			t.Errorf("NormalizeAnswer(%q) = %q, want %q", in, got, want)
		}
	}
	s := Sample{ID: "c", QA: []Question{
		{Category: 4, Answer: "Biscuit"},      // in the condensed region
		{Category: 1, Answer: "Bach partita"}, // in the recent part only
		{Category: 2, Answer: "lake"},         // "lakes" is another word
		{Category: 5, Answer: "pasta"},        // adversarial: not counted
		{Category: 3, Answer: "."},            // normalises to nothing: not counted
	}}
	texts := map[string]MemoryText{"c": {
		File:      "## 🗜 Condensed history\n- Ana adopted biscuit.\n## Recent\nThe Bach  partita; the lakes. pasta\n",
		Condensed: "- Ana adopted biscuit.",
	}}
	c := MeasureCoverage([]Sample{s}, texts, 600)
	if c.Questions != 3 || c.File != 2.0/3 || c.Condensed != 1.0/3 || c.ByCategory["4"].Condensed != 1 || c.ByCategory["1"].File != 1 {
		t.Errorf("coverage = %+v", c)
	}
}

// TestCoverageIsIndependentOfDateFormat: a date counts as the same answer
// however the memory file or the gold answer writes it, and a different
// day does not.
func TestCoverageIsIndependentOfDateFormat(t *testing.T) {
	for _, tc := range [][2]string{
		{"2023-05-07", "7 May 2023"},
		{"on 2023-5-7.", "on 7 May 2023."},
		{"May 7, 2023", "7 May 2023"},
		{"may 7th 2023", "7 May 2023"},
		{"7th of May, 2023", "7 May 2023"},
		{"The week before 3June, 2022", "The week before 3 June 2022"},
		{"Sept 2, 2023", "2 September 2023"},
		{"2023-05", "May 2023"},
		{"January, 2023", "January 2023"},
		{"April.2023", "April 2023"},
		{"2023-02-30", "2023-02-30"}, // no such day
		{"2020-2023", "2020-2023"},
		{"I may 20 cats", "I may 20 cats"},
	} {
		if got := CanonicalDates(tc[0]); got != tc[1] {
			t.Errorf("CanonicalDates(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	answers := []string{"7 May 2023", "May 7, 2023", "2023-05-07", "7 May, 2023", "May 2023", "2023"}
	for _, written := range []string{"2023-05-07", "7 May 2023", "May 7, 2023", "7th of May 2023"} {
		s := Sample{ID: "c"}
		for _, a := range answers {
			s.QA = append(s.QA, Question{Category: 2, Answer: a})
		}
		s.QA = append(s.QA, Question{Category: 2, Answer: "8 May 2023"})
		texts := map[string]MemoryText{"c": {File: "- went to the museum on " + written, Condensed: "- went to the museum on " + written}}
		c := MeasureCoverage([]Sample{s}, texts, 600)
		if want := float64(len(answers)) / float64(len(s.QA)); c.Condensed != want || c.File != want {
			t.Errorf("written %q: coverage file %.3f condensed %.3f, want %.3f for each", written, c.File, c.Condensed, want)
		}
	}
}
