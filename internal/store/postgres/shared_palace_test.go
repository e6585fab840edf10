package postgres_test

// At the palace level over a shared PostgreSQL palace: several processes
// mining at once, oddly named files, and two processes with different
// embedding models.

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
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

// pgPalace is a palace over a PostgreSQL store on dsn (at most 4
// connections), with embedder emb; the store is closed when the test ends.
func pgPalace(t *testing.T, dsn string, h home.Home, emb palace.Embedder, popts palace.Options) (*postgres.Store, *palace.Palace) {
	t.Helper()
	st := openPG(t, postgres.Options{DSN: dsn, MaxConns: 4})
	return st, hometest.PalaceOver(t, h, st, emb, popts)
}

// TestMineNonUTF8FileName: Linux file names are bytes, and a markdown
// file whose name is not valid UTF-8 (say, copied from an old Latin-1
// system) may sit in an agent's directory. The SQLite palace mines it like
// any other; PostgreSQL refuses the source path ("invalid byte sequence
// for encoding UTF8", from GetFile under mineFile), and Mine returns that
// error for the whole run: every file after it goes unmined and vanished
// files are not removed. Mine's contract is that a file that cannot be
// mined is skipped with a reason and never stops the run.
func TestMineNonUTF8FileName(t *testing.T) {
	ctx := t.Context()
	build := func(h home.Home) {
		agents := filepath.Join(h.Root, "hive", "agents")
		filetest.Write(t, filepath.Join(agents, "ada", "memory.md"), "# Memory — ada (ada)\n\n## 2026-01-01 — ada note\nkubernetes rollback\n")
		filetest.Write(t, filepath.Join(agents, "ada", "notes-\xe9t\xe9.md"), "# Notes\n\n## 2026-01-02 — latin-1 note\nsummer notes\n")
		filetest.Write(t, filepath.Join(agents, "bob", "memory.md"), "# Memory — bob (bob)\n\n## 2026-01-03 — bob note\ndatabase tuning\n")
	}
	open := map[string]func(t *testing.T) store.Store{
		"sqlite": func(t *testing.T) store.Store { return openSQLite(t) },
		"postgres": func(t *testing.T) store.Store {
			return openPG(t, postgres.Options{DSN: pgtest.OnlySchema(t, pgtest.EnvPostgres)})
		},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h := hometest.New(t)
			build(h)
			st := open[backend](t)
			p := hometest.PalaceOver(t, h, st, nil, palace.Options{})
			rep, err := p.Mine(ctx, filepath.Join(h.Root, "hive"), palace.MineOptions{})
			if err != nil {
				t.Errorf("mine the hive: %v", err)
			}
			t.Logf("%s: %d files, %d skipped", backend, rep.Files, len(rep.Skipped))
			stats, err := st.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wings := map[string]int{}
			for _, w := range stats.Wings {
				wings[w.Wing] = w.Drawers
			}
			if wings["ada"] == 0 || wings["bob"] == 0 {
				t.Errorf("after mining the hive: drawers per wing %v, want ada and bob mined", wings)
			}
		})
	}
}

// axisEmbedder embeds every text as the unit vector along one axis, so
// that a stored vector says which model made it.
type axisEmbedder struct {
	id        string
	axis, dim int
}

func (e axisEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, e.dim)
		v[e.axis] = 1
		out[i] = v
	}
	return out, nil
}
func (e axisEmbedder) Dim() int        { return e.dim }
func (e axisEmbedder) ModelID() string { return e.id }

// TestTwoModelsOneSharedPalace: machine 1 runs with model m1, machine
// 2 opens the shared palace with model m2 of the same dimension (say
// MiniLM here, an OpenAI-compatible all-minilm there: both 384-d). Opening
// with m2 clears m1's vectors and records m2, as designed. But machine 1's
// long-running process still holds m1 and goes on mining: its new drawers
// get m1 vectors in a palace recorded as m2 (the store only checks the
// dimension), so two models' vectors are mixed — which the design says
// never happens ("changing it re-embeds, never mixes") — and machine 1's
// searches score m1 queries against m2 vectors without a word. Either
// machine 1's write should be refused (the palace's model is no longer
// its model) or the vectors must all be m2's.
func TestTwoModelsOneSharedPalace(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.OnlySchema(t, pgtest.EnvPostgres)
	const dim = 4
	h1, h2 := hometest.New(t), hometest.New(t)
	ada := filepath.Join(h1.Root, "hive", "agents", "ada", "memory.md")
	filetest.Write(t, ada, "# Memory — ada (ada)\n\n## 2026-01-01 — first\nkubernetes rollback plan\n")
	filetest.Write(t, filepath.Join(h2.Root, "hive", "agents", "bob", "memory.md"), "# Memory — bob (bob)\n\n## 2026-01-03 — bob note\ndatabase tuning\n")

	_, p1 := pgPalace(t, dsn, h1, axisEmbedder{"m1", 0, dim}, palace.Options{Origin: "m1"})
	if _, err := p1.Mine(ctx, filepath.Dir(ada), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}

	st2, p2 := pgPalace(t, dsn, h2, axisEmbedder{"m2", 1, dim}, palace.Options{Origin: "m2"})
	if _, err := p2.Mine(ctx, filepath.Join(h2.Root, "hive"), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}

	// Machine 1 keeps going: its agent writes a note, it mines.
	f, err := os.OpenFile(ada, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "\n## 2026-01-02 — second\nstaging cluster upgrade\n")
	f.Close()
	_, mineErr := p1.Mine(ctx, filepath.Dir(ada), palace.MineOptions{})

	model, _, err := st2.Model(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st2.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every vector of model m2 is e1: scored against e1 it is 1.
	e1 := make([]float32, dim)
	e1[1] = 1
	res, err := st2.Vector(ctx, e1, store.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var foreign []string
	for _, sc := range res {
		if sc.Score < 0.999 {
			foreign = append(foreign, sc.ID)
		}
	}
	if len(foreign) > 0 {
		t.Errorf("the palace records model %q, but %d of its %d drawers hold vectors of another model (machine 1's mine after the switch returned %v): %v",
			model, len(foreign), len(all), mineErr, foreign)
	}
}

// TestDivergedCopiesMinedAtOnce: two machines hold different versions
// of the same agent's file (same home-relative path), and each also has an
// agent of its own; both mine everything at once, round after round, with
// vectors. After every round the shared file's drawers must be exactly one
// version's (as a fresh single-process palace mined from it holds them:
// ids, metadata, text), never a mix; the other agents' exactly theirs; the
// statistics must check; and reindexing on the machine that mined the
// shared file last must change nothing.
func TestDivergedCopiesMinedAtOnce(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.OnlySchema(t, pgtest.EnvPostgres)
	const dim = 4
	type machine struct {
		h  home.Home
		st *postgres.Store
		p  *palace.Palace
	}
	var ms []machine
	for range 2 {
		h := hometest.New(t)
		id, err := h.ID()
		if err != nil {
			t.Fatal(err)
		}
		st, p := pgPalace(t, dsn, h, axisEmbedder{"m", 2, dim}, palace.Options{Origin: id})
		ms = append(ms, machine{h, st, p})
	}
	version := func(m, round int) string {
		var b strings.Builder
		b.WriteString("# Memory — shared (shared)\n\n")
		for s := range 3 + round + m {
			fmt.Fprintf(&b, "## 2026-01-%02d — note %d\nmachine %d round %d section %d words kubernetes\n\n", 1+s, s, m, round, s)
		}
		return b.String()
	}
	own := func(m, round int) string {
		return fmt.Sprintf("# Memory — own%d (own%d)\n\n## 2026-02-01 — mine\nround %d notes\n", m, m, round)
	}
	// sharedDrawers is the drawers of the shared agent's wing by id.
	sharedDrawers := func(st store.Store) map[string]store.Drawer {
		ds, err := st.List(ctx, store.Filter{Wing: "shared"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]store.Drawer{}
		for _, d := range ds {
			out[d.ID] = d
		}
		return out
	}
	ref := func(m, round int) map[string]store.Drawer {
		h := hometest.New(t)
		filetest.Write(t, filepath.Join(h.Root, "hive", "agents", "shared", "memory.md"), version(m, round))
		_, st := hometest.FreshPalace(t, h, nil, palace.Options{})
		defer st.Close()
		return sharedDrawers(st)
	}
	sharedNow := func() map[string]store.Drawer { return sharedDrawers(ms[0].st) }
	same := func(a, b map[string]store.Drawer) bool {
		if len(a) != len(b) {
			return false
		}
		for id, d := range a {
			e, ok := b[id]
			if !ok || d.Heading != e.Heading || d.Text != e.Text || d.LineStart != e.LineStart || d.LineEnd != e.LineEnd ||
				d.Room != e.Room || d.Agent != e.Agent || d.Date != e.Date || d.Hash != e.Hash {
				return false
			}
		}
		return true
	}
	for round := range 5 {
		for i, m := range ms {
			filetest.Write(t, filepath.Join(m.h.Root, "hive", "agents", "shared", "memory.md"), version(i, round))
			filetest.Write(t, filepath.Join(m.h.Root, "hive", "agents", fmt.Sprintf("own%d", i), "memory.md"), own(i, round))
		}
		errs := make(chan error, 4)
		for _, m := range ms {
			for range 2 {
				go func() {
					_, err := m.p.Mine(ctx, filepath.Join(m.h.Root, "hive"), palace.MineOptions{})
					errs <- err
				}()
			}
		}
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: mine: %v", round, err)
			}
		}
		got := sharedNow()
		if !same(got, ref(0, round)) && !same(got, ref(1, round)) {
			t.Fatalf("round %d: the shared file's %d drawers are neither machine 0's version (%d) nor machine 1's (%d)",
				round, len(got), len(ref(0, round)), len(ref(1, round)))
		}
		for i := range ms {
			ds, err := ms[0].st.List(ctx, store.Filter{Wing: fmt.Sprintf("own%d", i)}, 0)
			if err != nil || len(ds) != 1 || !strings.Contains(ds[0].Text, fmt.Sprintf("round %d", round)) {
				t.Fatalf("round %d: own%d's drawers: %+v, %v", round, i, ds, err)
			}
		}
		if err := ms[1].st.Check(ctx); err != nil {
			t.Fatalf("round %d: Check: %v", round, err)
		}
		if miss, err := ms[1].st.MissingVectors(ctx, 0); err != nil || len(miss) != 0 {
			t.Fatalf("round %d: %d drawers without a vector (%v)", round, len(miss), err)
		}
	}
	// The owner of the shared file as it stands reindexes: same drawers.
	f, err := ms[0].st.GetFile(ctx, "hive/agents/shared/memory.md")
	if err != nil {
		t.Fatal(err)
	}
	before := sharedNow()
	for _, m := range ms {
		if id, _ := m.h.ID(); id == f.Origin {
			if _, err := m.p.Reindex(ctx, palace.ReindexOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if after := sharedNow(); !same(before, after) {
		t.Errorf("reindex by the shared file's owner changed its drawers: %d before, %d after", len(before), len(after))
	}
	if err := ms[0].st.Check(ctx); err != nil {
		t.Errorf("Check after reindex: %v", err)
	}
}

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
		w := lexical(t, ref, q, store.Filter{}, 20)
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
