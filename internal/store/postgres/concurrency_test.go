package postgres_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
)

// machine is one hivemem "process": its own home and its own connection
// pool to the shared database.
type machine struct {
	home   home.Home
	store  *postgres.Store
	palace *palace.Palace
	agents []string
}

func writeMemory(t *testing.T, h home.Home, agent string, sections []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s memory\n\n", agent)
	for _, s := range sections {
		b.WriteString(s)
	}
	filetest.Write(t, filepath.Join(h.Root, "hive", "agents", agent, "memory.md"), b.String())
}

func section(rng *rand.Rand, n int) string {
	words := strings.Fields("deploy pipeline flaky test kubernetes rollback database tuning lunch weather benchmark cache index search vector drawer palace agent memory")
	var b strings.Builder
	fmt.Fprintf(&b, "## 2026-01-%02d — note %d\n\n", 1+n%28, n)
	for range 5 + rng.IntN(30) {
		b.WriteString(words[rng.IntN(len(words))] + " ")
	}
	b.WriteString("\n\n")
	return b.String()
}

// TestConcurrentMining runs several "machines" (separate homes and pools on
// one database) mining at once for several rounds, while their files gain
// and lose sections: two machines mine different wings, two mine the same
// wing from identical files. Afterwards the shared palace must hold exactly
// the drawers a fresh single-process palace holds for the final files (no
// duplicates, no lost deletes), its statistics must check, and nothing may
// have deadlocked or failed.
func TestConcurrentMining(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.EnvPostgres)
	ctx := t.Context()
	layout := [][]string{{"ada"}, {"bob"}, {"shared"}, {"shared"}, {"shared", "cy"}}
	var ms []*machine
	for _, agents := range layout {
		h := hometest.New(t)
		st, p := pgPalace(t, dsn, h, nil, palace.Options{})
		ms = append(ms, &machine{home: h, store: st, palace: p, agents: agents})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	content := map[string][]string{} // agent -> sections, the same on every machine
	next := 0
	for round := range 6 {
		for _, agent := range []string{"ada", "bob", "shared", "cy"} {
			secs := content[agent]
			// Drop a random section or two, then add a few.
			for range rng.IntN(3) {
				if len(secs) > 0 {
					i := rng.IntN(len(secs))
					secs = append(secs[:i:i], secs[i+1:]...)
				}
			}
			for range 1 + rng.IntN(6) {
				secs = append(secs, section(rng, next))
				next++
			}
			content[agent] = secs
		}
		for _, m := range ms {
			for _, a := range m.agents {
				writeMemory(t, m.home, a, content[a])
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(ms)*2)
		for _, m := range ms {
			for _, a := range m.agents {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := m.palace.Mine(ctx, filepath.Join(m.home.Root, "hive", "agents", a), palace.MineOptions{}); err != nil {
						errs <- fmt.Errorf("round %d, %s: %w", round, a, err)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	if err := ms[0].store.Check(ctx); err != nil {
		t.Errorf("Check: %v", err)
	}

	// The reference: one process, SQLite, the final files.
	refHome := hometest.New(t)
	for a, secs := range content {
		writeMemory(t, refHome, a, secs)
	}
	_, ref := hometest.FreshPalace(t, refHome, nil, palace.Options{})
	want, err := ref.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ms[0].store.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("shared palace holds %d drawers, a single-process palace %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("drawer %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// Lexical ranking agrees with SQLite's on the same palace.
	for _, q := range []string{"deploy rollback", "flaky test", "vector palace memory", "weather"} {
		g, err := ms[1].store.Lexical(ctx, q, store.Filter{}, 20)
		if err != nil {
			t.Fatal(err)
		}
		w, err := ref.Lexical(ctx, q, store.Filter{}, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !sameScored(g, w) {
			t.Errorf("Lexical(%q):\n postgres %v\n sqlite   %v", q, g, w)
		}
	}
	t.Logf("%d drawers after 6 rounds of %d concurrent miners", len(got), 6)
}

// sameScored compares rankings: same ids in the same order, scores equal to
// float rounding. Drawers with equal scores rank by insertion order, which
// differs between two palaces mined in different orders, so ties are put
// in id order first (the last tie group can be cut differently by k, so it
// is left out).
func sameScored(a, b []store.Scored) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(x []store.Scored) []store.Scored {
		x = slices.Clone(x)
		slices.SortStableFunc(x, func(p, q store.Scored) int {
			if p.Score != q.Score {
				return cmp.Compare(q.Score, p.Score)
			}
			return cmp.Compare(p.ID, q.ID)
		})
		last := len(x)
		for last > 0 && x[last-1].Score == x[len(x)-1].Score {
			last--
		}
		return x[:last]
	}
	a, b = norm(a), norm(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		d := a[i].Score - b[i].Score
		if a[i].ID != b[i].ID || d > 1e-9*b[i].Score || -d > 1e-9*b[i].Score {
			return false
		}
	}
	return true
}
