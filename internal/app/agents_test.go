package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLastCondensedFollowsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var idx CondensedIndex
	write := func(lines ...string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			if _, err := f.WriteString(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name  string
		lines []string
		want  map[string]string
	}{
		{"no log yet", nil, map[string]string{}},
		{"condense events count, others do not", []string{
			`{"time":"2026-11-01T10:00:00Z","type":"condense","agent":"alice"}` + "\n",
			`{"time":"2026-11-02T10:00:00Z","type":"condense-abort","agent":"alice"}` + "\n",
			"not json\n",
		}, map[string]string{"alice": "2026-11-01T10:00:00Z"}},
		{"a newer event wins; a half-written line waits", []string{
			`{"time":"2026-11-03T10:00:00Z","type":"condense","agent":"alice"}` + "\n",
			`{"time":"2026-11-04T10:00:00Z","type":"condense","agent":"bob"`,
		}, map[string]string{"alice": "2026-11-03T10:00:00Z"}},
		{"the rest of the line arrives", []string{"}\n"}, map[string]string{"alice": "2026-11-03T10:00:00Z", "bob": "2026-11-04T10:00:00Z"}},
	}
	for _, st := range steps {
		write(st.lines...)
		got := idx.Read(path)
		if len(got) != len(st.want) {
			t.Errorf("%s: got %v, want %v", st.name, got, st.want)
		}
		for agent, ts := range st.want {
			if got[agent].Format(time.RFC3339) != ts {
				t.Errorf("%s: %s = %v, want %s", st.name, agent, got[agent], ts)
			}
		}
	}
}
