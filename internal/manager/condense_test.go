package manager

// The running manager condenses on its own schedule while agents
// keep appending (goroutines and a shell process, no lock); nothing an agent
// wrote may be lost, and the index must not end up with stale drawers.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/memfile"
)

func TestCondensesWhileAgentsAppend(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	agents := []string{"ann", "ben", "cat", "dan"}
	files := map[string]string{}
	pad := strings.Repeat("words about the deploy pipeline and the cache. ", 10)
	for _, a := range agents {
		var b strings.Builder
		fmt.Fprintf(&b, "# Memory — %s (%s)\n\n", a, a)
		for i := range 12 {
			fmt.Fprintf(&b, "## 2026-01-%02d — seed %d\nSEED-%s-%03d\n%s\n", i+1, i, a, i, pad)
		}
		files[a] = b.String()
	}
	cfg := `[reflector]
min_bytes = 1000
byte_trigger_pct = 1
section_trigger = 6
recent_keep = 3
interval = "20ms"
[summarizer]
provider = "extractive"
[manager]
debounce = "10ms"
scan_interval = "200ms"
`
	a := openHome(t, cfg, files)
	_, stop := running(t, a)

	path := func(agent string) string { return apptest.MemoryPath(t, a, agent) }
	const per = 150
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, ag := range agents[:3] {
		wg.Go(func() {
			for i := range per {
				f, err := os.OpenFile(path(ag), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					errs <- err
					return
				}
				_, err = fmt.Fprintf(f, "## 2026-12-01 — go %d\nGO-%s-%03d\n%s\n", i, ag, i, pad)
				f.Close()
				if err != nil {
					errs <- err
				}
				if i%10 == 9 {
					time.Sleep(15 * time.Millisecond) // let passes interleave; not a sync point
				}
			}
		})
	}
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do printf '## 2026-12-02 — sh %%d\nSH-dan-%%03d\n%s\n' $i $i >> "$F"; i=$((i+1)); done`, per, pad)
	sh := exec.Command("sh", "-c", script)
	sh.Env = append(os.Environ(), "F="+path("dan"))
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := sh.Wait(); err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Let the manager catch up: every agent condensed down to its
	// recent_keep sections (or given up on after an abort, which backs it
	// off for a minute).
	waitUntil(t, 20*time.Second, "the manager to condense every agent after the appends", func() (bool, string) {
		evs, err := eventlog.Open(a.Home().LogPath()).Read(0, nil)
		if err != nil {
			return false, err.Error()
		}
		last := map[string]string{}
		for _, ev := range evs {
			if strings.HasPrefix(ev.Kind, "condense") {
				last[ev.Agent] = ev.Kind
			}
		}
		for _, ag := range agents {
			data, err := os.ReadFile(path(ag))
			if err != nil {
				return false, err.Error()
			}
			f, err := memfile.Parse(data)
			if err != nil {
				return false, err.Error()
			}
			if n := len(f.Recent()); n > 3 && last[ag] != "condense-abort" {
				return false, fmt.Sprintf("%s has %d sections; last events %v", ag, n, last)
			}
		}
		return true, ""
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	lost := 0
	for _, ag := range agents {
		data, err := os.ReadFile(path(ag))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memfile.Parse(data); err != nil {
			t.Errorf("%s: %v", ag, err)
		}
		all := string(data)
		dir, _ := a.Home().ArchiveDir(ag)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".md") {
				b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				all += string(b)
			}
		}
		var want []string
		for i := range 12 {
			want = append(want, fmt.Sprintf("SEED-%s-%03d\n", ag, i))
		}
		for i := range per {
			if ag == "dan" {
				want = append(want, fmt.Sprintf("SH-dan-%03d\n", i))
			} else {
				want = append(want, fmt.Sprintf("GO-%s-%03d\n", ag, i))
			}
		}
		for _, w := range want {
			if !strings.Contains(all, w) {
				lost++
				if lost <= 10 {
					t.Errorf("%s: line %q lost", ag, strings.TrimSpace(w))
				}
			}
		}
	}
	evs, _ := eventlog.Open(a.Home().LogPath()).Read(0, nil)
	counts := map[string]int{}
	for _, ev := range evs {
		if strings.HasPrefix(ev.Kind, "condense") {
			counts[ev.Kind+"/"+ev.Reason]++
		}
	}
	t.Logf("events %v; %d lines lost", counts, lost)
}
