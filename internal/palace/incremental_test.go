package palace_test

// The miner against files that change shape, vanish, turn
// bad, are symlinks or FIFOs, and against random edit sequences. The
// reference is always a fresh mine of the same files into a new SQLite
// index: the incrementally maintained index must agree with it exactly.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// dumpIndex is an index as drawer id → every field a search shows, plus the
// file records (source → wing/agent), after an integrity check.
func dumpIndex(t *testing.T, st store.Store) (map[string]string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("index integrity: %v", err)
	}
	drawers, err := hometest.Drawers(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := st.Files(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string]string, len(fs))
	for _, f := range fs {
		files[f.Source] = f.Wing + "/" + f.Agent + "/" + f.Hash
	}
	return drawers, files
}

// freshDump mines the hive of h into a brand-new index and returns its dump.
func freshDump(t *testing.T, h home.Home, popts palace.Options) (map[string]string, map[string]string) {
	t.Helper()
	_, st := hometest.FreshPalace(t, h, nil, popts)
	defer st.Close()
	return dumpIndex(t, st)
}

// dumpDiff lists the differences between two dumps.
func dumpDiff(a, b map[string]string, an, bn string) []string {
	short := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "…"
		}
		return s
	}
	a, b = maps.Clone(a), maps.Clone(b)
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			m[k] = short(v)
		}
	}
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, fmt.Sprintf("%s only in %s: %s", k, an, v))
		} else if v != w {
			out = append(out, fmt.Sprintf("%s differs:\n\t%s: %s\n\t%s: %s", k, an, v, bn, w))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s only in %s: %s", k, bn, v))
		}
	}
	sort.Strings(out)
	return out
}

// assertMatchesFresh compares f's index with a fresh mine of the hive.
func assertMatchesFresh(t *testing.T, f *fixture, what string) {
	t.Helper()
	gotD, gotF := dumpIndex(t, f.st)
	wantD, wantF := freshDump(t, f.h, palace.Options{})
	diffs := append(dumpDiff(gotD, wantD, "index", "fresh"), dumpDiff(gotF, wantF, "index files", "fresh files")...)
	if len(diffs) > 0 {
		t.Fatalf("%s: the index differs from a fresh mine of the same files in %d places:\n%s",
			what, len(diffs), strings.Join(diffs[:min(8, len(diffs))], "\n"))
	}
}

func (f *fixture) mineHive() palace.MineReport {
	f.t.Helper()
	return f.mineDir(f.h.HiveDir())
}

func (f *fixture) lexical(q string) []palace.Hit {
	f.t.Helper()
	hits, err := f.p.Search(context.Background(), palace.Query{Text: q, Results: 100, Mode: palace.ModeLexical})
	if err != nil {
		f.t.Fatalf("search %q: %v", q, err)
	}
	return hits
}

// TestHeadingPromotedOrDemotedKeepsDrawer: a plain line turned into a "## "
// heading (or a heading turned back into a plain line) keeps the chunk's
// embed text, so the drawer keeps its id — and the miner then updates only
// its metadata, never its text. The index ends up with text that is not in
// the file, and in the demotion case a word of the file is unsearchable.
func TestHeadingPromotedOrDemotedKeepsDrawer(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		word                string // a word of the file after the edit
	}{
		{"promote", "Zebracrossing plans\nwe met about the yakshaving\n", "## Zebracrossing plans\nwe met about the yakshaving\n", "zebracrossing"},
		{"demote", "## Zebracrossing plans\nwe met about the yakshaving\n", "Zebracrossing plans\nwe met about the yakshaving\n", "zebracrossing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.write("alice", tc.before)
			f.mineHive()
			f.write("alice", tc.after)
			f.mineHive()
			if hits := f.lexical(tc.word); len(hits) != 1 {
				t.Errorf("search %q after the edit: %d hits %+v, want 1 (the word is in the file)", tc.word, len(hits), hits)
			}
			assertMatchesFresh(t, f, tc.name)
		})
	}
}

// TestFileTurnedBadKeepsItsDrawers: a file that was mined and then
// becomes binary, invalid UTF-8 or too large (an agent appended a bad
// byte, an archive grew past the limit) is skipped with a reason, and the
// drawers it had stay searchable: skipping a file must never make the
// history it held vanish. Once the file can be mined again, the index
// matches a fresh mine.
func TestFileTurnedBadKeepsItsDrawers(t *testing.T) {
	const good = "# Memory — alice (alice)\n\n## 2026-11-01 — note\nquokkaremembered in a good file\n"
	for _, tc := range []struct {
		name, reason string
		tail         string
	}{
		{"nul bytes", "binary", "\n## 2026-11-02 — x\nnew text\x00with a NUL\n"},
		{"invalid utf-8 in the middle", "UTF-8", "\n## 2026-11-02 — x\nnew text \xff\xfe broken\n"},
		{"too large", "too large", "\n## 2026-11-02 — x\n" + strings.Repeat("word ", 300<<10) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			path := f.write("alice", good)
			ctx := context.Background()
			p, err := palace.New(ctx, f.h, f.st, nil, palace.Options{MaxFileBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(good+tc.tail), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, tc.reason) {
				t.Fatalf("skipped %+v, want one file skipped for %q", rep.Skipped, tc.reason)
			}
			if rep.FilesRemoved != 0 || rep.Removed != 0 {
				t.Errorf("a skipped file lost drawers: %+v", rep)
			}
			hits, err := p.Search(ctx, palace.Query{Text: "quokkaremembered", Mode: palace.ModeLexical})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 {
				t.Errorf("search after the file turned bad (%s): %d hits, want the drawer it had", tc.name, len(hits))
			}
			// Repaired: the index follows the file again.
			if err := os.WriteFile(path, []byte(good+"\n## 2026-11-03 — fixed\nwombatrepaired\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			gotD, _ := dumpIndex(t, f.st)
			wantD, _ := freshDump(t, f.h, palace.Options{MaxFileBytes: 1 << 20})
			if d := dumpDiff(gotD, wantD, "index", "fresh"); len(d) > 0 {
				t.Errorf("index differs from a fresh mine after the repair:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestFIFOMemoryFileDoesNotHang: a memory.md that is a FIFO (or any
// non-regular file) must be skipped or refused, not read: reading a FIFO
// blocks until a writer appears, which would hang `hivemem mine <file>`,
// the manager's worker (holding the palace write lock) and wake-up.
func TestFIFOMemoryFileDoesNotHang(t *testing.T) {
	f := newFixture(t, nil)
	f.write("bob", "# Memory — bob (bob)\n\n## 2026-11-01 — note\nbob's note\n")
	fifo := filepath.Join(f.h.AgentsDir(), "alice", "memory.md")
	// Whatever blocks on the FIFO is released at the end by a writer that
	// opens and closes it.
	unblock := filetest.FIFO(t, fifo)
	t.Cleanup(unblock)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"mine the hive", func() error { _, err := f.p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{}); return err }},
		{"mine the file", func() error { _, err := f.p.Mine(ctx, fifo, palace.MineOptions{}); return err }},
		{"wake-up of the agent", func() error { _, err := f.p.WakeUp(ctx, "alice", 0); return err }},
		{"wake-up of the hive", func() error { _, err := f.p.WakeUp(ctx, "", 0); return err }},
	} {
		done := make(chan error, 1)
		go func() { done <- c.fn() }()
		select {
		case err := <-done:
			t.Logf("%s: %v", c.name, err)
		case <-time.After(2 * time.Second):
			t.Errorf("%s: still blocked on the FIFO memory file after 2s", c.name)
			unblock()
			<-done
		}
	}
}

// TestMineKeepsAMemoryFileReplacedByAFIFO: a memory.md that becomes a
// FIFO after it was mined is skipped with its reason and keeps its
// drawers whether the file itself or its directory is mined: a directory
// mine (the manager's scan) must not hide the skip from status.
func TestMineKeepsAMemoryFileReplacedByAFIFO(t *testing.T) {
	for _, c := range []struct {
		name  string
		given func(f *fixture, path string) string
	}{
		{"the file", func(_ *fixture, path string) string { return path }},
		{"its agent directory", func(_ *fixture, path string) string { return filepath.Dir(path) }},
		{"the hive", func(f *fixture, _ string) string { return f.h.HiveDir() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			path := f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalicewalrus note\n")
			f.mineDir(f.h.HiveDir())
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(filetest.FIFO(t, path))
			rep, err := f.p.Mine(context.Background(), c.given(f, path), palace.MineOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, s := range rep.Skipped {
				if s.Path == path {
					reasons = append(reasons, s.Reason)
				}
			}
			if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "not a regular file") {
				t.Errorf("mining %s with a FIFO at memory.md: skipped %+v, want one \"not a regular file\" skip for %s", c.name, rep.Skipped, path)
			}
			if hits := f.lexical("alicewalrus"); len(hits) != 1 || rep.FilesRemoved != 0 {
				t.Errorf("mining %s with a FIFO at memory.md: %d of alice's drawers left, %d files removed; want 1 and 0", c.name, len(hits), rep.FilesRemoved)
			}
		})
	}
}

// TestMineHomeRootRemovesVanished: mining the home directory itself
// (`hivemem mine .` from the home, or `mine $HIVEMEM_HOME`) must, like
// mining any other directory, remove the drawers of files that are gone.
func TestMineHomeRootRemovesVanished(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalicewalrus note\n")
	bob := f.write("bob", "# Memory\n\n## 2026-11-01 — b\nbobwalrus note\n")
	f.mineDir(f.h.Root)
	if len(f.lexical("bobwalrus")) != 1 {
		t.Fatal("bob not mined")
	}
	if err := os.RemoveAll(filepath.Dir(bob)); err != nil {
		t.Fatal(err)
	}
	rep := f.mineDir(f.h.Root)
	if hits := f.lexical("bobwalrus"); len(hits) != 0 || rep.FilesRemoved != 1 {
		t.Errorf("after bob's file was deleted, mining the home root removed %d files and search still finds %d of bob's drawers (source %s)",
			rep.FilesRemoved, len(hits), hits[0].Source)
	}
}

// TestFileVanishesDuringMine: a file listed by the directory walk
// and deleted (or renamed) before the miner reaches it. The mine must not
// end with the index holding a file that is gone, nor call it unreadable.
func TestFileVanishesDuringMine(t *testing.T) {
	for _, mode := range []string{"deleted", "renamed"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, nil)
			f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalicenote text\n")
			bob := f.write("bob", "# Memory\n\n## 2026-11-01 — b\nbobvanishing text\n")
			f.mineHive()
			f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalicenote text\n\n## 2026-11-02 — a2\nmore\n")
			f.write("bob", "# Memory\n\n## 2026-11-01 — b\nbobvanishing text, edited\n")
			done := false
			rep, err := f.p.Mine(context.Background(), f.h.HiveDir(), palace.MineOptions{Progress: func(_, _ int, path string) {
				if done || !strings.Contains(path, filepath.Join("agents", "alice")) {
					return
				}
				done = true
				switch mode {
				case "deleted":
					if err := os.RemoveAll(filepath.Dir(bob)); err != nil {
						t.Error(err)
					}
				case "renamed":
					if err := os.Rename(filepath.Dir(bob), filepath.Join(f.h.AgentsDir(), "zed")); err != nil {
						t.Error(err)
					}
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !done {
				t.Fatal("the progress hook never ran after alice")
			}
			t.Logf("report: %+v", rep)
			for _, s := range rep.Skipped {
				if strings.Contains(s.Reason, "unreadable") {
					t.Errorf("a vanished file is reported as %q", s.Reason)
				}
			}
			if hits := f.lexical("bobvanishing"); mode == "deleted" && len(hits) != 0 {
				t.Errorf("the mine finished with drawers of a deleted file: %s %q", hits[0].Source, hits[0].Text)
			}
			// One more mine always converges.
			f.mineHive()
			assertMatchesFresh(t, f, "after a second mine")
		})
	}
}

// TestOddFilesMinedOrSkipped: 0-byte files, header-only files, a BOM, CRLF line
// endings, lone CRs, NUL bytes and invalid UTF-8 in the middle, and a file
// right at the size limit: each is mined or skipped with the right reason,
// and the index matches a fresh mine after every step.
func TestOddFilesMinedOrSkipped(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	p, err := palace.New(ctx, f.h, f.st, nil, palace.Options{MaxFileBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	limit := "## 2026-11-01 — big\n" + strings.Repeat("x", 4096-len("## 2026-11-01 — big\n"))
	cases := []struct {
		agent, content string
		skip           string // reason substring, "" when mined
		word           string // a word to find when mined
	}{
		{"empty", "", "", ""},
		{"headeronly", "# Memory — headeronly\n", "", ""},
		{"headertext", "# Memory\nsome headerwombat prose before any section\n", "", "headerwombat"},
		{"bom", "\ufeff## 2026-11-01 — bom\nbomkiwi text\n", "", "bomkiwi"},
		{"crlf", "# Memory\r\n\r\n## 2026-11-01 — crlf\r\ncrlfemu line one\r\nline two\r\n", "", "crlfemu"},
		{"nul", "# Memory\n\n## a\nnulmoose\x00\n", "binary", ""},
		{"badutf8", "# Memory\n\n## a\nok text\n\xc3\x28 broken\n## b\nmore\n", "UTF-8", ""},
		{"atlimit", limit, "", ""},
		{"overlimit", limit + "y", "too large", ""},
		{"onlyheading", "## 2026-11-01 — headingonlyibis", "", "headingonlyibis"},
		{"fences", "## a\n```\n## not a heading fencedlynx\n```\n## b\nafter\n", "", "fencedlynx"},
	}
	for _, c := range cases {
		f.write(c.agent, c.content)
	}
	rep, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[filepath.Base(filepath.Dir(s.Path))] = s.Reason
	}
	for _, c := range cases {
		if c.skip != "" && !strings.Contains(reasons[c.agent], c.skip) {
			t.Errorf("%s: skip reason %q, want %q", c.agent, reasons[c.agent], c.skip)
		}
		if c.skip == "" && reasons[c.agent] != "" {
			t.Errorf("%s: skipped (%s), want it mined", c.agent, reasons[c.agent])
		}
		if c.word != "" {
			if hits := f.lexical(c.word); len(hits) != 1 || hits[0].Agent != c.agent {
				t.Errorf("%s: search %q = %+v", c.agent, c.word, hits)
			}
		}
	}
	ds, err := f.st.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// CRLF: no drawer text or heading keeps a carriage return at its end.
	for _, d := range ds {
		if strings.HasSuffix(d.Text, "\r") || strings.HasSuffix(d.Heading, "\r") {
			t.Errorf("crlf: drawer keeps a CR: heading %q text %q", d.Heading, d.Text)
		}
	}
	// Re-mining is a no-op, and the index is what a fresh mine gives.
	rep, err = p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != 0 || rep.Added != 0 || rep.Removed != 0 {
		t.Errorf("second mine changed something: %+v", rep)
	}
	gotD, _ := dumpIndex(t, f.st)
	wantD, _ := freshDump(t, f.h, palace.Options{MaxFileBytes: 4096})
	if d := dumpDiff(gotD, wantD, "index", "fresh"); len(d) > 0 {
		t.Errorf("differs from fresh:\n%s", strings.Join(d, "\n"))
	}
	// Fixing a bad file mines it.
	f.write("nul", "# Memory\n\n## a\nnulmoose fixed\n")
	f.write("overlimit", "## 2026-11-01 — small\nsmallnow\n")
	if _, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"nulmoose", "smallnow"} {
		if len(f.lexical(w)) != 1 {
			t.Errorf("%s not found after the file was fixed", w)
		}
	}
}

// TestThousandsOfTinySectionsRemineIncrementally: 5000 one-line sections, many of them
// identical, mined, then edited at the front (every line number moves),
// with duplicates removed and added: each re-mine changes only what
// changed, and the index stays equal to a fresh one.
func TestThousandsOfTinySectionsRemineIncrementally(t *testing.T) {
	f := newFixture(t, nil)
	var b strings.Builder
	b.WriteString("# Memory — many (many)\n\n")
	for i := range 5000 {
		if i%5 == 0 {
			b.WriteString("## same\nidentical body\n")
		} else {
			fmt.Fprintf(&b, "## s%d\nw%d\n", i, i)
		}
	}
	content := b.String()
	f.write("many", content)
	rep := f.mineHive()
	if rep.Added != 5000 {
		t.Fatalf("first mine added %d drawers, want 5000", rep.Added)
	}
	// Insert a section at the front: all line numbers move, no drawer is new
	// but the inserted one.
	content = strings.Replace(content, "\n\n## same", "\n\n## front\nfrontinserted\n## same", 1)
	f.write("many", content)
	rep = f.mineHive()
	if rep.Added != 1 || rep.Removed != 0 || rep.Kept != 5000 {
		t.Errorf("front insert: %+v, want +1 -0 =5000", rep)
	}
	assertMatchesFresh(t, f, "front insert")
	// Remove the first of the identical sections.
	content = strings.Replace(content, "## same\nidentical body\n", "", 1)
	f.write("many", content)
	rep = f.mineHive()
	if rep.Added != 0 || rep.Removed != 1 {
		t.Errorf("duplicate removed: %+v, want +0 -1", rep)
	}
	assertMatchesFresh(t, f, "duplicate removed")
	if n := len(f.lexical("identical")); n != 100 {
		t.Errorf("identical sections found %d times, want 100 (results capped at 100)", n)
	}
}

// churnAgent is one agent's file in the random test, as a list of sections
// plus a header, rendered with the chosen line ending and BOM.
type churnAgent struct {
	id       string
	header   string
	sections []string // each "## heading\nbody lines\n" with \n endings
	crlf     bool
	bom      bool
	gone     bool
}

func (a *churnAgent) render() string {
	s := a.header + strings.Join(a.sections, "")
	if a.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if a.bom {
		s = "\ufeff" + s
	}
	return s
}

// TestRandomEditsMatchFreshMine: random sequences of appends, edits,
// deletions, reorders, duplicates, long sections, CRLF/BOM switches,
// truncations, atomic replaces, agent renames and deletions, and archive
// files, with a mine after each burst: the index must always equal a fresh
// mine of the same files, and searching every marker word gives the same
// drawers in both.
func TestRandomEditsMatchFreshMine(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			f := newFixture(t, nil)
			randomChurn(t, f, seed, 25, func(round, word int, log []string, rng *rand.Rand) {
				gotD, gotF := dumpIndex(t, f.st)
				wantD, wantF := freshDump(t, f.h, palace.Options{})
				diffs := append(dumpDiff(gotD, wantD, "index", "fresh"), dumpDiff(gotF, wantF, "index files", "fresh files")...)
				if len(diffs) > 0 {
					t.Fatalf("round %d (ops %v): index differs from a fresh mine in %d places:\n%s",
						round, log[max(0, len(log)-6):], len(diffs), strings.Join(diffs[:min(6, len(diffs))], "\n"))
				}
				// Every marker word finds the same drawers in both indexes.
				if round%5 == 4 {
					for w := 1; w <= word; w += 1 + rng.IntN(5) {
						q := fmt.Sprintf("mk%05d", w)
						var got []string
						for _, h := range f.lexical(q) {
							got = append(got, h.ID)
						}
						sort.Strings(got)
						var want []string
						for id, v := range wantD {
							if strings.Contains(v, q) {
								want = append(want, id)
							}
						}
						sort.Strings(want)
						if !slices.Equal(got, want) {
							t.Fatalf("round %d: search %q finds %v, the drawers holding it are %v", round, q, got, want)
						}
					}
				}
			})
		})
	}
}

// TestRandomEditsHybridSearchAgrees: the same churn with an embedder
// (vectors, the embedding cache, the in-memory vector index following
// writes): hybrid search on the incrementally mined index ranks exactly as
// on a fresh index of the same files, scores included, and only cache
// misses are embedded.
func TestRandomEditsHybridSearchAgrees(t *testing.T) {
	for seed := uint64(11); seed <= 13; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			f := newFixture(t, &countingEmbedder{})
			randomChurn(t, f, seed, 15, func(round, word int, log []string, rng *rand.Rand) {
				ctx := context.Background()
				fp, st := hometest.FreshPalace(t, f.h, &countingEmbedder{}, palace.Options{})
				defer st.Close()
				if missing, err := f.st.MissingVectors(ctx, 10); err != nil || len(missing) > 0 {
					t.Fatalf("round %d: %d drawers without a vector (%v)", round, len(missing), err)
				}
				for range 4 {
					q := fmt.Sprintf("mk%05d and some words lorem", 1+rng.IntN(word))
					for _, mode := range []string{palace.ModeHybrid, palace.ModeVector} {
						// Every hit, so that exact ties (ordered by rowid, which
						// depends on history)
						// can be compared as sets.
						got, err := f.p.Search(ctx, palace.Query{Text: q, Mode: mode, Results: palace.MaxResults})
						if err != nil {
							t.Fatal(err)
						}
						want, err := fp.Search(ctx, palace.Query{Text: q, Mode: mode, Results: palace.MaxResults})
						if err != nil {
							t.Fatal(err)
						}
						show := func(hs []palace.Hit) string {
							// Scores are compared to 5 decimals: the vector kernel's
							// float32 sums differ in the 8th digit with a drawer's
							// position in memory.
							r := func(x float64) float64 { return math.Round(x*1e5) / 1e5 }
							hs = slices.Clone(hs)
							sort.SliceStable(hs, func(i, j int) bool {
								if r(hs[i].Score) != r(hs[j].Score) {
									return r(hs[i].Score) > r(hs[j].Score)
								}
								return hs[i].ID < hs[j].ID
							})
							var b strings.Builder
							for _, h := range hs {
								fmt.Fprintf(&b, "\n\t%s %.5f %.5f %.5f %q", h.ID, r(h.Score), r(h.LexicalScore), r(h.VectorScore), h.Text[:min(30, len(h.Text))])
							}
							return b.String()
						}
						if show(got) != show(want) {
							t.Fatalf("round %d (ops %v): %s search %q\nindex:%s\nfresh:%s", round, log[max(0, len(log)-6):], mode, q, show(got), show(want))
						}
					}
				}
			})
		})
	}
}

// randomChurn runs rounds of random edits on f's hive, mining after
// each, and calls check after every mine.
func randomChurn(t *testing.T, f *fixture, seed uint64, rounds int, check func(round, word int, log []string, rng *rand.Rand)) {
	t.Helper()
	{
		{
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			word := 0
			newWord := func() string { word++; return fmt.Sprintf("mk%05d", word) }
			section := func() string {
				h := fmt.Sprintf("## 2026-%02d-%02d — %s\n", rng.IntN(12)+1, rng.IntN(28)+1, newWord())
				n := rng.IntN(4)
				var b strings.Builder
				b.WriteString(h)
				for range n {
					fmt.Fprintf(&b, "%s and some words %s\n", newWord(), newWord())
				}
				if rng.IntN(4) == 0 {
					b.WriteString("\n")
				}
				return b.String()
			}
			long := func() string {
				var b strings.Builder
				fmt.Fprintf(&b, "## 2026-11-01 — long %s\n", newWord())
				for p := range 6 {
					for range 12 {
						fmt.Fprintf(&b, "%s lorem ipsum dolor sit amet consectetur %s\n", newWord(), newWord())
					}
					if p%2 == 0 {
						b.WriteString("\n")
					}
				}
				return b.String()
			}
			agents := map[string]*churnAgent{}
			ids := []string{"ann", "bob", "cat", "dan", "eve"}
			for _, id := range ids[:3] {
				a := &churnAgent{id: id, header: fmt.Sprintf("# Memory — %s (%s)\n\n", id, id)}
				for range 3 {
					a.sections = append(a.sections, section())
				}
				agents[id] = a
			}
			path := func(id string) string { return filepath.Join(f.h.AgentsDir(), id, "memory.md") }
			save := func(a *churnAgent) {
				if err := os.MkdirAll(filepath.Dir(path(a.id)), 0o755); err != nil {
					t.Fatal(err)
				}
				data := a.render()
				if rng.IntN(2) == 0 {
					tmp := filepath.Join(filepath.Dir(path(a.id)), ".memory.md.tmp")
					if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(tmp, path(a.id)); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(path(a.id), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, a := range agents {
				save(a)
			}
			f.mineHive()
			var log []string
			for round := range rounds {
				for range 1 + rng.IntN(4) {
					var live []*churnAgent
					for _, id := range ids {
						if a := agents[id]; a != nil && !a.gone {
							live = append(live, a)
						}
					}
					if len(live) == 0 {
						a := &churnAgent{id: ids[rng.IntN(len(ids))], header: "# Memory\n\n"}
						agents[a.id] = a
						save(a)
						continue
					}
					a := live[rng.IntN(len(live))]
					op := rng.IntN(14)
					log = append(log, fmt.Sprintf("r%d %s op%d", round, a.id, op))
					switch op {
					case 0, 1: // append a section (the common case)
						a.sections = append(a.sections, section())
					case 2: // edit a section's body
						if len(a.sections) > 0 {
							i := rng.IntN(len(a.sections))
							a.sections[i] += fmt.Sprintf("edited %s\n", newWord())
						}
					case 3: // delete a section
						if len(a.sections) > 0 {
							i := rng.IntN(len(a.sections))
							a.sections = slices.Delete(a.sections, i, i+1)
						}
					case 4: // duplicate a section
						if len(a.sections) > 0 {
							a.sections = append(a.sections, a.sections[rng.IntN(len(a.sections))])
						}
					case 5: // reorder
						rng.Shuffle(len(a.sections), func(i, j int) { a.sections[i], a.sections[j] = a.sections[j], a.sections[i] })
					case 6: // a long section split into pieces
						a.sections = append(a.sections, long())
					case 7: // line endings
						a.crlf = !a.crlf
					case 8: // BOM
						a.bom = !a.bom
					case 9: // truncate to the first sections
						a.sections = a.sections[:rng.IntN(len(a.sections)+1)]
					case 10: // delete the file (the agent directory stays)
						if err := os.Remove(path(a.id)); err != nil {
							t.Fatal(err)
						}
						a.gone = true
						continue
					case 11: // rename the agent (directory moves)
						var free []string
						for _, id := range ids {
							if agents[id] == nil || agents[id].gone {
								free = append(free, id)
							}
						}
						if len(free) == 0 {
							continue
						}
						to := free[rng.IntN(len(free))]
						_ = os.RemoveAll(filepath.Join(f.h.AgentsDir(), to))
						if err := os.Rename(filepath.Join(f.h.AgentsDir(), a.id), filepath.Join(f.h.AgentsDir(), to)); err != nil {
							t.Fatal(err)
						}
						delete(agents, a.id)
						a.id = to
						agents[to] = a
						continue
					case 12: // remove the whole agent directory
						if err := os.RemoveAll(filepath.Join(f.h.AgentsDir(), a.id)); err != nil {
							t.Fatal(err)
						}
						a.gone = true
						continue
					case 13: // an archive file appears, changes or goes
						adir := filepath.Join(f.h.ArchiveRoot(), a.id)
						if err := os.MkdirAll(adir, 0o755); err != nil {
							t.Fatal(err)
						}
						ap := filepath.Join(adir, "2026-11.md")
						if rng.IntN(3) == 0 {
							_ = os.Remove(ap)
						} else {
							af, err := os.OpenFile(ap, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
							if err != nil {
								t.Fatal(err)
							}
							af.WriteString(section())
							af.Close()
						}
						continue
					}
					save(a)
				}
				f.mineHive()
				check(round, word, log, rng)
			}
		}
	}
}

// TestNewOriginStillRemovesVanished: the same SQLite palace opened by
// the same home under a new id (home-id deleted and made again). Files
// mined under the old id must still lose their drawers when they vanish:
// only a shared palace (store.Writer.Shared) has other homes' files in
// it.
func TestNewOriginStillRemovesVanished(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	old, err := palace.New(ctx, f.h, f.st, nil, palace.Options{Origin: "host-aaaa"})
	if err != nil {
		t.Fatal(err)
	}
	bob := f.write("bob", "# Memory\n\n## 2026-11-01 — b\nbobneworigin\n")
	f.write("ann", "# Memory\n\n## 2026-11-01 — a\nannneworigin\n")
	if _, err := old.Mine(ctx, f.h.HiveDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := palace.New(ctx, f.h, f.st, nil, palace.Options{Origin: "host-bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(bob); err != nil {
		t.Fatal(err)
	}
	rep, err := p.Mine(ctx, f.h.HiveDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(ctx, palace.Query{Text: "bobneworigin", Mode: palace.ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 || rep.FilesRemoved != 1 {
		t.Errorf("bob's file is gone but after a mine under the home's new id its drawers stay (%d hits, %d files removed)", len(hits), rep.FilesRemoved)
	}
	// The manager mines a vanished agent file by its path.
	if _, err := p.Mine(ctx, bob, palace.MineOptions{}); err != nil {
		t.Errorf("mining bob's vanished file: %v", err)
	}
}
