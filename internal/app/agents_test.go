package app

import (
	"os"
	"path/filepath"
	"syscall"
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

// TestLastCondensedWithAFIFOLog: a FIFO planted at the event log gives no
// condensations at once, instead of blocking the status of the manager,
// the CLI and the API on an open that waits for a writer.
func TestLastCondensedWithAFIFOLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() { // let go of a reader stuck on it, if any
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	done := make(chan map[string]time.Time, 1)
	go func() { done <- LastCondensed(path) }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("LastCondensed of a FIFO = %v, want none", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LastCondensed hangs on a FIFO at the event log")
	}
}
