package locomo

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/bench/longmemeval"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
)

func TestHaystackRendersSessionsForTheGenericImporter(t *testing.T) {
	ss := mustLoad(t, "testdata/sessions.json")
	q, dias := Haystack(ss[0], true)
	if q.ID != "conv-s1" || len(q.Sessions) != 3 || len(dias) != 3 {
		t.Fatalf("haystack %q with %d sessions, %d dia lists; want conv-s1 with 3", q.ID, len(q.Sessions), len(dias))
	}
	tests := []struct {
		name  string
		want  longmemeval.Session
		dias  []string
		inner int
	}{
		{"speaker_a opens the session: user, speaker_b answers", longmemeval.Session{ID: "session_1", Date: "2024-02-14T19:05:00Z", Turns: []longmemeval.Turn{
			{Role: "user", Text: "Rosa: I finally repaired the old loom in the attic."},
			{Role: "assistant", Text: "Tomas: What will you weave first?"},
			{Role: "user", Text: "Rosa: A wool blanket for my niece."},
		}}, []string{"D1:1", "D1:2", "D1:3"}, 0},
		{"speaker_b opens it; a newline folds, a caption is kept", longmemeval.Session{ID: "session_2", Date: "2024-03-03T09:30:00Z", Turns: []longmemeval.Turn{
			{Role: "assistant", Text: "Tomas: The orchard frost took half of the apricot blossoms."},
			{Role: "user", Text: "Rosa: Did the smudge pots help at all?"},
			{Role: "assistant", Text: "Tomas: A little. Look at the rows. [shared an image: a photo of rows of trees in mist]"},
		}}, []string{"D2:1", "D2:2", "D2:3"}, 1},
		{"a date that does not parse leaves the session undated", longmemeval.Session{ID: "session_3", Turns: []longmemeval.Turn{
			{Role: "user", Text: "Rosa: The niece loved the blanket, she sleeps under it every night."},
		}}, []string{"D3:1"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := q.Sessions[tc.inner]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("session = %+v\nwant %+v", got, tc.want)
			}
			if got := dias[tc.inner]; !reflect.DeepEqual(got, tc.dias) {
				t.Errorf("dia ids = %v, want %v", got, tc.dias)
			}
		})
	}
	noCapt, _ := Haystack(ss[0], false)
	if got := noCapt.Sessions[1].Turns[2].Text; got != "Tomas: A little. Look at the rows." {
		t.Errorf("without captions: %q", got)
	}
}

// TestRunAsSessionsMapsTurnsThroughTheImport: the conversation goes
// through capture's generic importer into session files, each LoCoMo
// session's turn lines carry its dia ids, and the scores come from the
// session room alone.
func TestRunAsSessionsMapsTurnsThroughTheImport(t *testing.T) {
	ss := mustLoad(t, "testdata/sessions.json")
	p, _ := hometest.Palace(t, hometest.New(t), nil, palace.Options{})
	res, err := Run(context.Background(), p, ss, Options{Dataset: "sessions", AsSessions: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.AsSessions || res.Drawers == 0 {
		t.Fatalf("result %+v", res)
	}
	m := res.Modes[palace.ModeLexical]
	if m.Questions != 3 || m.SessionRecall5 != 1 || m.MRR != 1 || m.TurnRecall10 != 1 {
		t.Fatalf("lexical: %+v", m)
	}
	dir, err := p.Home().SessionsDir("conv-s1")
	if err != nil {
		t.Fatal(err)
	}
	md, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(md) != 3 {
		t.Fatalf("session files: %v, %v; want one per session", md, err)
	}
	maps := &lineMaps{home: p.Home(), bySrc: map[string]map[int]string{}, sessOf: map[string]int{}}
	q, dias := Haystack(ss[0], true)
	input := filepath.Join(t.TempDir(), "again.jsonl")
	data, err := longmemeval.GenericInput(q, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// A second import of the same conversation adds nothing and still
	// names every session's files.
	imp, files, err := longmemeval.ImportGeneric(context.Background(), p.Home(), p, "conv-s1", input, q.Sessions)
	if err != nil || imp.TurnsAdded != 0 {
		t.Fatalf("re-import: %d turns added, %v", imp.TurnsAdded, err)
	}
	for j, ls := range q.Sessions {
		if err := maps.addSession(files[ls.ID], ss[0].Sessions[j].N, dias[j]); err != nil {
			t.Fatal(err)
		}
		for _, f := range files[ls.ID] {
			text, err := os.ReadFile(p.Home().Abs(f))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(text), "\n")
			byText := map[string]string{}
			for _, tn := range ss[0].Sessions[j].Turns {
				byText[tn.DiaID] = tn.Speaker + ": "
			}
			for n, dia := range maps.bySrc[f] {
				if !strings.Contains(lines[n-1], byText[dia]) || !strings.HasPrefix(lines[n-1], "- **") {
					t.Errorf("%s line %d = %q mapped to %s", f, n, lines[n-1], dia)
				}
			}
			if maps.sessOf[f] != ss[0].Sessions[j].N {
				t.Errorf("%s is session %d, want %d", f, maps.sessOf[f], ss[0].Sessions[j].N)
			}
		}
	}
	if err := maps.addSession(files["session_1"], 1, dias[0][:2]); err == nil {
		t.Error("a session file with more turns than dia ids was mapped")
	}
}
