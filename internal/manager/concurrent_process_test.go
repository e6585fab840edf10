package manager_test

// Real processes: `hivemem run` and CLI commands on one
// home while the palace file is deleted or corrupted under them, and
// several `hivemem mine` processes at once while files churn.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/filetest"
)

// TestPalaceCorruptedMidRunIsReported: palace.db is overwritten with junk
// while the manager runs. The manager must report the failure (not panic,
// not claim success), stop cleanly, and `hivemem reindex` must rebuild a
// working index from the markdown.
func TestPalaceCorruptedMidRunIsReported(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"garbage", "truncated"} {
		t.Run(mode, func(t *testing.T) {
			h := newTestHome(t)
			pad := strings.Repeat("padding words for a bigger palace file ", 20)
			for _, a := range []string{"alice", "bob"} {
				h.writeAgent(t, a, memoryFile(a, 40, pad))
			}
			// A CLI mine first, so that the palace's pages are in palace.db
			// itself (checkpointed when the command closed it), not only in
			// the manager's write-ahead log.
			if out, errOut, err := h.hm(t, "mine"); err != nil {
				t.Fatalf("mine: %v\n%s%s", err, out, errOut)
			}
			p := h.startRun(t)
			p.idle(t, 10*time.Second)

			db := filepath.Join(h.root, "palace", "palace.db")
			size := filetest.Size(t, db)
			switch mode {
			case "garbage": // same inode, every page junk
				filetest.WriteAt(t, db, 0, []byte(strings.Repeat("\xde\xad\xbe\xef not a database ", int(size)/20+1))[:size])
			case "truncated": // a third of the file left
				filetest.Truncate(t, db, size/3)
			}
			before := time.Now()
			h.appendAgent(t, "alice", "## 2026-11-05 — late\nlatewombat\n")
			h.appendAgent(t, "bob", "## 2026-11-05 — late\nlatekoala\n")
			// The manager either keeps working from its own pages or shows an
			// error; it must not look healthy while mining nothing.
			waitFor(t, 10*time.Second, "the manager to mine or to report a failure", func() (bool, string) {
				s := p.status(t)
				for _, a := range s.Agents {
					if a.MiningBackoff != nil {
						t.Logf("the manager reports: %s: %s", a.Agent, a.MiningBackoff.LastError)
						return true, ""
					}
				}
				for _, pr := range s.Problems {
					if pr.What == "index stats" || pr.What == "agents" {
						t.Logf("the manager reports: %s: %s", pr.What, pr.Error)
						return true, ""
					}
				}
				n := 0
				for _, a := range s.Agents {
					if a.LastMined.After(before) {
						n++
					}
				}
				return n == 2, fmt.Sprintf("%+v", s.Agents)
			})
			if strings.Contains(p.stderr.String(), "panic") {
				t.Errorf("the manager panicked:\n%s", tail(p.stderr.String(), 30))
			}
			if code := p.stop(t, syscall.SIGTERM, 10*time.Second); code != 0 {
				t.Logf("exit code %d after SIGTERM with a corrupted palace", code)
			}
			out, errOut, err := h.hm(t, "reindex")
			if err != nil {
				t.Fatalf("`hivemem reindex` does not recover from a %s palace.db: %v\n%s%s", mode, err, out, errOut)
			}
			for _, q := range []string{"latewombat", "latekoala", marker("alice", 3), marker("bob", 39)} {
				if n := len(h.searchHits(t, q)); n != 1 {
					t.Errorf("after reindex, %q: %d hits", q, n)
				}
			}
			assertMatchesReindex(t, h)
		})
	}
}

// TestConcurrentMineProcessesMatchFreshMine: three `hivemem mine` processes loop
// over the hive while the test appends, rewrites, renames and deletes
// agent files. No command may fail, and after a last mine the index is
// exactly a fresh reindex.
func TestConcurrentMineProcessesMatchFreshMine(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	agents := []string{"ann", "bob", "cat", "dan"}
	for _, a := range agents {
		h.writeAgent(t, a, memoryFile(a, 5, "seed"))
	}
	stopMiners := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stopMiners:
					return
				default:
				}
				args := []string{"mine"}
				if i == 2 {
					args = append(args, filepath.Join(h.root, "hive", "agents"))
				}
				if out, errOut, err := h.hm(t, args...); err != nil {
					errs <- fmt.Errorf("hivemem %v: %v\n%s%s", args, err, out, errOut)
				}
			}
		})
	}
	for step := range 60 {
		a := agents[step%len(agents)]
		switch step % 6 {
		case 0, 1:
			if _, err := os.Stat(h.memPath(a)); err == nil {
				h.appendAgent(t, a, fmt.Sprintf("## 2026-11-%02d — churn %d\nchurnword%03d\n", step%28+1, step, step))
			}
		case 2:
			h.writeAgent(t, a, memoryFile(a, 3+step%4, fmt.Sprintf("rewrite%03d", step)))
		case 3:
			_ = os.RemoveAll(filepath.Dir(h.memPath(a)))
		case 4:
			to := a + "x"
			_ = os.RemoveAll(filepath.Dir(h.memPath(to)))
			_ = os.Rename(filepath.Dir(h.memPath(a)), filepath.Dir(h.memPath(to)))
		case 5:
			h.writeAgent(t, a, memoryFile(a, 2, "back"))
		}
		time.Sleep(15 * time.Millisecond)
	}
	close(stopMiners)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if out, errOut, err := h.hm(t, "mine"); err != nil {
		t.Fatalf("final mine: %v\n%s%s", err, out, errOut)
	}
	assertMatchesReindex(t, h)
}

// httpSearchIDs asks the running manager's API for the drawer ids a lexical
// search finds.
func httpSearchIDs(t *testing.T, p *runProc, q string) []string {
	t.Helper()
	res, err := p.client().Search(t.Context(), app.SearchRequest{Query: q, Mode: "lexical", Results: 100})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	sort.Strings(ids)
	return ids
}

// TestRunSearchAgreesWithCLI: the manager keeps a warm in-memory
// BM25 index; CLI processes write the same palace (mining a directory the
// manager does not watch, removing files from it) while the manager mines
// the agents' appends. The manager's API search and a CLI search must find
// the same drawers for every word.
func TestRunSearchAgreesWithCLI(t *testing.T) {
	t.Parallel()
	h := newTestHome(t)
	h.writeAgent(t, "alice", memoryFile("alice", 3, "shared"))
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	p := h.startRun(t)
	p.idle(t, 10*time.Second)
	// Warm the manager's lexical index before the CLI writes.
	httpSearchIDs(t, p, "shared")
	words := []string{"shared", marker("alice", 0), marker("alice", 2)}
	for i := range 6 {
		w := fmt.Sprintf("noteword%02d", i)
		words = append(words, w)
		if err := os.WriteFile(filepath.Join(notes, fmt.Sprintf("n%d.md", i)), []byte("## 2026-11-01 — n\n"+w+" shared\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			if err := os.Remove(filepath.Join(notes, "n1.md")); err != nil {
				t.Fatal(err)
			}
		}
		if out, errOut, err := h.hm(t, "mine", notes, "--wing", "notes"); err != nil {
			t.Fatalf("mine notes: %v\n%s%s", err, out, errOut)
		}
		h.appendAgent(t, "alice", fmt.Sprintf("## 2026-11-%02d — more\nappendword%02d shared\n", i+2, i))
		words = append(words, fmt.Sprintf("appendword%02d", i))
	}
	p.idle(t, 10*time.Second)
	agree := func(what string) {
		t.Helper()
		waitFor(t, 10*time.Second, "the manager's search to agree with the CLI's "+what, func() (bool, string) {
			for _, w := range words {
				cli := h.searchHits(t, w)
				sort.Strings(cli)
				api := httpSearchIDs(t, p, w)
				if !slices.Equal(cli, api) {
					return false, fmt.Sprintf("%q: CLI %v, manager %v", w, cli, api)
				}
			}
			return true, ""
		})
	}
	agree("after CLI mines")
	// A reindex by another process re-creates every drawer (new rowids).
	if out, errOut, err := h.hm(t, "reindex"); err != nil {
		t.Fatalf("reindex: %v\n%s%s", err, out, errOut)
	}
	agree("after a CLI reindex")
	if err := os.Remove(filepath.Join(notes, "n2.md")); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := h.hm(t, "mine", notes, "--wing", "notes"); err != nil {
		t.Fatalf("mine notes: %v\n%s%s", err, out, errOut)
	}
	agree("after a file removed by a CLI mine")
	if code := p.stop(t, syscall.SIGTERM, 5*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
