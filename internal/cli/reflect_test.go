package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
)

// racingMemoryFile is a memory file of n short sections, each with a
// marker unique to the trial, in the shape of the reproduction.
func racingMemoryFile(trial, n int) string {
	var b strings.Builder
	b.WriteString("# Memory — alice\n")
	for s := 1; s <= n; s++ {
		fmt.Fprintf(&b, "\n## 2026-12-01 — s%d\nline UQA%dx%d alpha\n", s, trial, s)
	}
	return b.String()
}

// archivedHeadings counts each section heading over all of alice's archive
// files.
func (h *procHome) archivedHeadings(t *testing.T) map[string]int {
	t.Helper()
	return hometest.ArchivedHeadings(t, h.archive)
}

// TestRacingReflectNowArchivesEachSectionOnce: two `hivemem reflect --now`
// processes started together on one over-full file. One condenses, the
// other waits for the agent's condense lock and then finds nothing to
// evict; every evicted section is in the archive exactly once, and search
// finds each archived line once. Several trials, since a race may pass by
// luck.
func TestRacingReflectNowArchivesEachSectionOnce(t *testing.T) {
	h := newProcHome(t)
	if err := os.WriteFile(filepath.Join(h.root, "config.toml"), []byte("[reflector]\nrecent_keep = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.agent, 0o755); err != nil {
		t.Fatal(err)
	}
	const sections, keep, trials = 300, 5, 6
	for trial := range trials {
		if err := os.RemoveAll(h.archive); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.mem, []byte(racingMemoryFile(trial, sections)), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		outs := make([]string, 2)
		codes := make([]int, 2)
		for i := range 2 {
			wg.Go(func() {
				var stdout, stderr string
				codes[i], stdout, stderr = h.run("reflect", "--now", "alice")
				outs[i] = stdout + stderr
			})
		}
		wg.Wait()
		for i := range 2 {
			if codes[i] != 0 {
				t.Fatalf("trial %d: reflect --now %d exited %d:\n%s", trial, i, codes[i], outs[i])
			}
		}
		if !strings.Contains(outs[0]+outs[1], "condensed") {
			t.Fatalf("trial %d: neither process condensed:\n%s\n%s", trial, outs[0], outs[1])
		}
		got := h.archivedHeadings(t)
		if len(got) != sections-keep {
			t.Errorf("trial %d: %d distinct sections archived, want %d", trial, len(got), sections-keep)
		}
		for s := 1; s <= sections-keep; s++ {
			head := fmt.Sprintf("2026-12-01 — s%d", s)
			if got[head] != 1 {
				t.Errorf("trial %d: section %q archived %d times, want once\n%s\n%s", trial, head, got[head], outs[0], outs[1])
				break
			}
		}
		// Search sees each archived line once in the archive.
		for _, s := range []int{1, 150, sections - keep} {
			code, stdout, stderr := h.run("search", "--json", "--results", "20", fmt.Sprintf("UQA%dx%d", trial, s))
			if code != 0 {
				t.Fatalf("search: exit %d: %s", code, stderr)
			}
			var res struct {
				Results []struct{ Source string } `json:"hits"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("search output: %v\n%s", err, stdout)
			}
			// The condensed history may quote the line as well; the
			// archive must hold it once.
			archived := 0
			for _, r := range res.Results {
				if strings.HasPrefix(r.Source, "hive/archive/") {
					archived++
				}
			}
			if archived != 1 {
				t.Errorf("trial %d: search UQA%dx%d: %d archive hits, want 1: %+v", trial, trial, s, archived, res.Results)
			}
		}
	}
}
