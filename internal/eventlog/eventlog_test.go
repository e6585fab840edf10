package eventlog

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestAppendReadSubscribe(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "hive", "log.jsonl"))
	ch, stop := l.Subscribe()
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := l.Append(Event{Type: "mine", Agent: "a", Data: map[string]any{"i": i}}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	all, err := l.Read(0, nil)
	if err != nil || len(all) != 50 {
		t.Fatalf("Read = %d events, %v", len(all), err)
	}
	last, _ := l.Read(7, nil)
	if len(last) != 7 || last[6].Data["i"] != all[49].Data["i"] {
		t.Fatalf("Read(7) = %v", last)
	}
	if got := len(ch); got != 50 {
		t.Fatalf("subscriber saw %d events", got)
	}
	// A torn or foreign line is skipped, not fatal.
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n")
	f.Close()
	l.Append(Event{Type: "restore"})
	got, err := l.Read(0, func(e Event) bool { return e.Type == "restore" })
	if err != nil || len(got) != 1 {
		t.Fatalf("filtered Read = %v, %v", got, err)
	}
}
