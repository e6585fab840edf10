package reflector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// TestArchiveRollsOverBeforeMaxFileBytes: a condensation whose evicted
// sections do not fit in one archive file under palace.max_file_bytes
// fills <month>.md, then <month>-2.md, ...; every part stays within the
// limit, so the miner indexes all of them and every archived section is
// searchable; a later condensation goes on in the last part.
func TestArchiveRollsOverBeforeMaxFileBytes(t *testing.T) {
	const limit = 64 << 10
	e := newEnv(t, &fakeSum{})
	e.cfg.Palace.MaxFileBytes = limit
	e.cfg.Reflector.RecentKeep = 5
	const n = 400
	e.write("alice", memoryFile(n, 900)) // about 380 KB
	ctx := context.Background()
	if _, err := e.r.Condense(ctx, "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	dir, _ := e.home.ArchiveDir("alice")
	parts := func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, en := range ents {
			if !strings.HasPrefix(en.Name(), ".") && strings.HasSuffix(en.Name(), ".md") {
				out = append(out, en.Name())
			}
		}
		return out
	}
	got := parts()
	if len(got) < 5 {
		t.Fatalf("archive files %v: want the %d evicted sections spread over several parts", got, n-5)
	}
	for _, name := range got {
		if !archivePartRE.MatchString(name) || !strings.HasPrefix(name, "2026-11") {
			t.Errorf("archive file %q: want 2026-11.md, 2026-11-2.md, ...", name)
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > limit {
			t.Errorf("archive part %s is %d bytes, over the limit %d", name, st.Size(), limit)
		}
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if !strings.HasPrefix(string(data), archiveHeader("alice")) {
			t.Errorf("archive part %s does not start with the archive header", name)
		}
	}
	all := e.archiveText("alice")
	for i := range n - 5 {
		if c := strings.Count(all, fmt.Sprintf("\nmarker-%04d\n", i)); c != 1 {
			t.Fatalf("section %d archived %d times, want once", i, c)
		}
	}

	// Every part is mined and searchable.
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := palace.New(ctx, e.home, st, nil, palace.Options{MaxFileBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Mine(ctx, e.home.HiveDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 {
		t.Fatalf("mine skipped %+v", rep.Skipped)
	}
	for _, i := range []int{0, n / 2, n - 6} {
		hits, err := p.Search(ctx, palace.Query{Text: fmt.Sprintf("marker-%04d", i), Mode: palace.ModeLexical, Results: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Room != "archive" {
			t.Errorf("search marker-%04d: %+v, want the one archived section", i, hits)
		}
	}

	// The next condensation appends to the last part, not the first.
	before := parts()
	f, err := os.OpenFile(e.path("alice"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := n; i < n+3; i++ {
		f.WriteString(sectionText(i, 900))
	}
	f.Close()
	if _, err := e.r.Condense(ctx, "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	after := parts()
	if len(after) < len(before) || len(after) > len(before)+1 {
		t.Fatalf("archive files %v after a small second condensation, were %v", after, before)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "2026-11.md"))
	if strings.Contains(string(first), fmt.Sprintf("marker-%04d", n-5)) {
		t.Errorf("second condensation appended to the first, full part")
	}
	for _, name := range before {
		if !slices.Contains(after, name) {
			t.Errorf("archive file %s gone after the second condensation: %v", name, after)
		}
	}
}
