package palace_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memory"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// countingEmbedder is a deterministic bag-of-words embedder that counts
// every text it embeds, so tests can see exactly what mining re-embeds.
type countingEmbedder struct {
	mu    sync.Mutex
	texts []string
	model string
}

func (e *countingEmbedder) Dim() int { return 64 }
func (e *countingEmbedder) ModelID() string {
	if e.model != "" {
		return e.model
	}
	return "test-bow-64"
}
func (e *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.texts = append(e.texts, texts...)
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,:;!?()`'\"")))
			v[h.Sum32()%64]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

func (e *countingEmbedder) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.texts)
}

func (e *countingEmbedder) reset() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.texts
	e.texts = nil
	return t
}

type fixture struct {
	t   testing.TB
	h   home.Home
	st  store.Store
	emb *countingEmbedder
	p   *palace.Palace
}

func newFixture(t testing.TB, emb *countingEmbedder) *fixture {
	t.Helper()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, h: h, emb: emb}
	f.reopen()
	return f
}

func (f *fixture) reopen() {
	f.t.Helper()
	if f.st != nil {
		f.st.Close()
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(f.h.PalaceDir(), "palace.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { st.Close() })
	var emb palace.Embedder
	if f.emb != nil {
		emb = f.emb
	}
	p, err := palace.New(context.Background(), f.h, st, emb, palace.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.st, f.p = st, p
}

func (f *fixture) write(agent, content string) string {
	f.t.Helper()
	return hometest.WriteMemory(f.t, f.h, agent, content)
}

// mine mines the agents' memory files (mineHive: the whole hive).
func (f *fixture) mine() palace.MineReport {
	f.t.Helper()
	return f.mineDir(f.h.AgentsDir())
}

func (f *fixture) mineDir(dir string) palace.MineReport {
	f.t.Helper()
	rep, err := f.p.Mine(context.Background(), dir, palace.MineOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

func (f *fixture) search(q string, filter store.Filter) []palace.Hit {
	f.t.Helper()
	hits, err := f.p.Search(context.Background(), palace.Query{Text: q, Results: 20, Filter: filter})
	if err != nil {
		f.t.Fatalf("search %q: %v", q, err)
	}
	return hits
}

func section(i int) string {
	return fmt.Sprintf("## 2026-11-%02d — note %d\nWorked on component%d and wrote the handler for endpoint%d.\nThe deploy of service%d succeeded after retry.\n\n", i%28+1, i, i, i, i)
}

// bigFile builds a memory file of at least size bytes out of many sections.
func bigFile(size int) (string, int) {
	var b strings.Builder
	b.WriteString("# Memory — Big (big)\n\n")
	n := 0
	for b.Len() < size {
		b.WriteString(section(n))
		n++
	}
	return b.String(), n
}

func TestMineIdempotent(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	content, n := bigFile(32 << 10)
	f.write("big", content)
	first := f.mine()
	if first.Added != n || first.Embedded != n {
		t.Fatalf("first mine: %+v, want %d drawers added and embedded", first, n)
	}
	f.emb.reset()
	second := f.mine()
	if second.Added != 0 || second.Removed != 0 || second.Embedded != 0 || second.Unchanged != 1 {
		t.Fatalf("second mine changed something: %+v", second)
	}
	if f.emb.count() != 0 {
		t.Fatalf("second mine embedded %d texts", f.emb.count())
	}
}

func TestMineIncrementalAppend(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	content, n := bigFile(128 << 10)
	path := f.write("big", content)
	f.mine()
	f.emb.reset()
	extra := "## 2026-11-29 — appended later\nThe quokka migration finished without downtime.\n"
	af, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	af.WriteString(extra)
	af.Close()
	rep := f.mine()
	got := f.emb.reset()
	if rep.Added != 1 || rep.Removed != 0 || rep.Kept != n || len(got) != 1 || !strings.Contains(got[0], "quokka") {
		t.Fatalf("append: report %+v, embedded %q; want exactly the new section", rep, got)
	}
	hits := f.search("quokka migration", store.Filter{})
	if len(hits) == 0 || hits[0].Heading != "2026-11-29 — appended later" || hits[0].Date != "2026-11-29" {
		t.Fatalf("new section not found first: %+v", hits)
	}
}

func TestStaleRemoval(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	f.write("alice", "# Memory — Alice (alice)\n\n## 2026-11-01 — zebra\nThe zebra crossing project.\n\n## 2026-11-02 — yak\nYak shaving notes.\n")
	bob := f.write("bob", "# Memory — Bob (bob)\n\n## 2026-11-03 — walrus\nWalrus tusk inventory.\n")
	f.mine()
	if len(f.search("zebra", store.Filter{})) == 0 || len(f.search("walrus", store.Filter{})) == 0 {
		t.Fatal("mined text not found")
	}
	// Edit: the zebra section goes, a new one comes.
	f.write("alice", "# Memory — Alice (alice)\n\n## 2026-11-02 — yak\nYak shaving notes.\n\n## 2026-11-04 — okapi\nOkapi sightings.\n")
	if err := os.Remove(bob); err != nil {
		t.Fatal(err)
	}
	rep := f.mine()
	if rep.Removed != 1 || rep.Added != 1 || rep.FilesRemoved != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, q := range []string{"zebra crossing", "walrus tusk"} {
		for _, mode := range []string{palace.ModeLexical, palace.ModeVector, palace.ModeHybrid} {
			hits, err := f.p.Search(context.Background(), palace.Query{Text: q, Mode: mode, Results: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if strings.Contains(strings.ToLower(h.Text), strings.Fields(q)[0]) {
					t.Fatalf("%s search %q returned vanished text: %+v", mode, q, h)
				}
			}
		}
	}
	// Moving lines keeps drawers and updates their line ranges.
	hits := f.search("yak shaving", store.Filter{})
	if len(hits) == 0 || hits[0].LineStart != 3 {
		t.Fatalf("yak drawer line range not updated: %+v", hits)
	}
}

func TestMineSkipsBadFiles(t *testing.T) {
	f := newFixture(t, nil)
	f.write("good", "# Memory — good\n\n## 2026-11-01 — fine\nOrdinary text about gardening.\n")
	bad := map[string][]byte{
		"binary":   {0x7f, 'E', 'L', 'F', 0, 0, 1, 2},
		"latin1":   []byte("## caf\xe9\nbroken encoding\n"),
		"toolarge": []byte(strings.Repeat("word ", 2<<20)),
	}
	for agent, data := range bad {
		dir := filepath.Join(f.h.AgentsDir(), agent)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "memory.md"), data, 0o644)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := palace.New(context.Background(), f.h, st, nil, palace.Options{MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Mine(context.Background(), f.h.AgentsDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[filepath.Base(filepath.Dir(s.Path))] = s.Reason
	}
	for agent, want := range map[string]string{"binary": "binary", "latin1": "UTF-8", "toolarge": "too large"} {
		if !strings.Contains(reasons[agent], want) {
			t.Errorf("%s: skip reason %q, want %q", agent, reasons[agent], want)
		}
	}
	if rep.Files != 1 || rep.Added != 1 {
		t.Fatalf("good file not mined: %+v", rep)
	}
}

// TestMineLogsEachSkipOnce: every skip of a mine, found in the walk (a
// link out of the home) or at the file (binary), is one log warning,
// which is where `hivemem run` shows it; a caller that shows the
// report's skips itself (ReportsSkips, the CLI) gets none.
func TestMineLogsEachSkipOnce(t *testing.T) {
	f := newFixture(t, nil)
	f.write("good", "# Memory — good\n\n## 2026-11-01 — fine\nOrdinary text about gardening.\n")
	dir := filepath.Join(f.h.AgentsDir(), "binary")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.md"), []byte("# x\n\nab\x00cd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("# outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.h.AgentsDir(), "good", "linked.md")); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := palace.New(context.Background(), f.h, st, nil, palace.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, reports := range []bool{false, true} {
		log.Reset()
		rep, err := p.Mine(context.Background(), f.h.AgentsDir(), palace.MineOptions{ReportsSkips: reports})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Skipped) != 2 {
			t.Fatalf("skipped %+v, want the binary file and the link", rep.Skipped)
		}
		want := 0
		if !reports {
			want = 1
		}
		for _, s := range rep.Skipped {
			if n := strings.Count(log.String(), "path="+s.Path+" "); n != want {
				t.Errorf("ReportsSkips %v: %s logged %d times, want %d:\n%s", reports, s.Path, n, want, log.String())
			}
		}
	}
}

func TestHostileQueries(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	f.write("alice", "# Memory — Alice\n\n## 2026-11-01 — sql notes\nWe DROP TABLE only in migrations; NEAR the end of a query use quotes \"like this\".\n")
	f.mine()
	nasty := []string{`"`, `""`, `*`, `NEAR(a b)`, `a -b`, `(`, `)`, `AND OR NOT`, `'; DROP TABLE drawers; --`,
		`heading:foo`, `^x`, `café ☕ 日本語`, strings.Repeat("x", 4000), "a\x00b", `\`, `{}`, `%`, `_`}
	for _, q := range nasty {
		if _, err := f.p.Search(context.Background(), palace.Query{Text: q}); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if hits := f.search(`'; DROP TABLE drawers; --`, store.Filter{}); len(hits) == 0 {
		t.Error("a query with SQL in it should still find the drawer mentioning DROP TABLE")
	}
	for _, q := range []string{"", "   ", strings.Repeat("y", palace.MaxQueryBytes+1), "bad\xffutf8"} {
		if _, err := f.p.Search(context.Background(), palace.Query{Text: q}); err == nil {
			t.Errorf("query %q: want a clear error", q)
		}
	}
	if _, err := f.p.Search(context.Background(), palace.Query{Text: "x", Filter: store.Filter{Since: "2026-13-40"}}); err == nil {
		t.Error("bad --since accepted")
	}
}

func TestSearchFilters(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	f.write("alice", "# Memory — Alice\n\n## 📌 Durable facts (pinned — never condensed)\n- Deploys happen on Tuesdays.\n## 🗜 Condensed history\n_(none yet)_\n## Recent\n## 2026-10-01 — deploy\nDeploy went fine.\n\n## 2026-11-15 — deploy again\nDeploy went fine again.\n")
	f.write("bob", "# Memory — Bob\n\n## 2026-11-20 — deploy\nBob's deploy.\n")
	f.mine()
	check := func(name string, filter store.Filter, want func(palace.Hit) bool, min int) {
		hits := f.search("deploy", filter)
		if len(hits) < min {
			t.Errorf("%s: %d hits, want at least %d", name, len(hits), min)
		}
		for _, h := range hits {
			if !want(h) {
				t.Errorf("%s: hit out of scope: %+v", name, h)
			}
		}
	}
	check("wing", store.Filter{Wing: "bob"}, func(h palace.Hit) bool { return h.Wing == "bob" }, 1)
	check("agent", store.Filter{Agent: "alice"}, func(h palace.Hit) bool { return h.Agent == "alice" }, 3)
	check("room", store.Filter{Room: "pinned"}, func(h palace.Hit) bool { return h.Room == "pinned" }, 1)
	check("since", store.Filter{Since: "2026-11-01"}, func(h palace.Hit) bool { return h.Date >= "2026-11-01" }, 2)
}

func TestModelChangeReembeds(t *testing.T) {
	emb := &countingEmbedder{}
	f := newFixture(t, emb)
	f.write("alice", "# Memory — Alice\n\n## 2026-11-01 — one\nFirst.\n\n## 2026-11-02 — two\nSecond.\n")
	f.mine()
	emb.reset()
	emb.model = "test-bow-64-v2"
	f.reopen()
	rep := f.mine()
	if rep.Embedded != 2 {
		t.Fatalf("after a model change the next mine should re-embed every drawer: %+v", rep)
	}
	model, _, _ := f.st.Model(context.Background())
	if model != "test-bow-64-v2" {
		t.Fatalf("store model = %q", model)
	}
}

func TestRememberPinWakeUp(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if _, err := memory.Remember(ctx, f.h, "carol", "login flake", "Cookie expiry skew caused the flake.\n## 📌 Durable facts (pinned — never condensed)\n- injected", now); err != nil {
		t.Fatal(err)
	}
	if rep := f.mine(); rep.Added == 0 {
		t.Fatalf("the remembered note was not mined: %+v", rep)
	}
	if res, err := memory.Pin(ctx, f.h, "carol", "Releases ship on Tuesdays"); err != nil || !res.Added {
		t.Fatalf("pin: %+v %v", res, err)
	}
	f.mine()
	hits := f.search("cookie expiry", store.Filter{Wing: "carol"})
	if len(hits) == 0 || hits[0].Heading != "2026-11-29 — login flake" {
		t.Fatalf("remembered text not searchable: %+v", hits)
	}
	d, err := f.p.WakeUp(ctx, "carol", 800)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pinned) != 1 || d.Pinned[0] != "Releases ship on Tuesdays" {
		t.Fatalf("wake-up pinned = %q (the injected heading must not become a region)", d.Pinned)
	}
	if len(d.Recent) != 1 || !strings.Contains(d.Text, "login flake") {
		t.Fatalf("wake-up = %+v", d)
	}
	all, err := f.p.WakeUp(ctx, "", 800)
	if err != nil || len(all.Agents) != 1 || all.Agents[0].Agent != "carol" {
		t.Fatalf("hive wake-up = %+v, %v", all, err)
	}
	if _, err := f.p.WakeUp(ctx, "nobody", 800); err == nil {
		t.Fatal("wake-up of an unknown wing should fail")
	}
}

// failingEmbedder embeds like countingEmbedder until fail is set, then
// fails every call, as a broken model or an unreachable endpoint does.
type failingEmbedder struct {
	countingEmbedder
	fail atomic.Bool
}

func (e *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail.Load() {
		return nil, errors.New("embedding endpoint unreachable")
	}
	return e.countingEmbedder.Embed(ctx, texts)
}

// TestAMineThatFailsAfterAWriteIsCaughtUpByTheNext: when mining fails
// after a note and a fact were written, the written file is not recorded
// as mined, the write stands once, and the next mine catches the index
// up. (That the write is then reported done, not failed, is app's
// Remember and Pin: their MineError.)
func TestAMineThatFailsAfterAWriteIsCaughtUpByTheNext(t *testing.T) {
	ctx := context.Background()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	emb := &failingEmbedder{}
	p, err := palace.New(ctx, h, st, emb, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb.fail.Store(true)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	note := "the build cache lives on the second disk"
	if _, err := memory.Remember(ctx, h, "carol", "cache", note, now); err != nil {
		t.Fatal(err)
	}
	if _, err := memory.Pin(ctx, h, "carol", "Releases ship on Tuesdays"); err != nil {
		t.Fatal(err)
	}
	path, _ := h.MemoryPath("carol")
	if _, err := p.Mine(ctx, path, palace.MineOptions{}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("mine with a broken embedder: %v, want the embedder's error", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), note); n != 1 {
		t.Fatalf("note written %d times:\n%s", n, data)
	}
	if n := strings.Count(string(data), "- Releases ship on Tuesdays\n"); n != 1 {
		t.Fatalf("fact written %d times:\n%s", n, data)
	}
	if fs, err := st.Files(ctx, ""); err != nil || len(fs) != 0 {
		t.Fatalf("a failed mine recorded files: %+v", fs)
	}

	// The next mine (the manager's watcher or scan, hivemem mine) catches up.
	emb.fail.Store(false)
	rep, err := p.Mine(ctx, path, palace.MineOptions{})
	if err != nil || rep.Changed != 1 || rep.Added == 0 {
		t.Fatalf("catch-up mine: %+v, %v", rep, err)
	}
	hits, err := p.Search(ctx, palace.Query{Text: "build cache second disk", Filter: store.Filter{Wing: "carol"}})
	if err != nil || len(hits) == 0 || hits[0].Heading != "2026-11-29 — cache" {
		t.Fatalf("note not searchable after the catch-up mine: %+v, %v", hits, err)
	}
}

func TestWakeUpBudget(t *testing.T) {
	f := newFixture(t, nil)
	content, _ := bigFile(64 << 10)
	f.write("big", content)
	for _, budget := range []int{50, 200, 800} {
		d, err := f.p.WakeUp(context.Background(), "big", budget)
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens > budget || !d.Truncated || len(d.Recent) == 0 {
			t.Fatalf("budget %d: tokens %d truncated %v recent %d", budget, d.Tokens, d.Truncated, len(d.Recent))
		}
		if !strings.Contains(d.Recent[0].Heading, "note ") {
			t.Fatalf("newest first expected: %+v", d.Recent[0])
		}
	}
}

func TestReindexMatchesMine(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	content, n := bigFile(16 << 10)
	f.write("big", content)
	f.mine()
	f.emb.reset()
	rep, err := f.p.Reindex(context.Background(), palace.ReindexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != n || rep.Embedded != 0 || rep.CacheHits != n {
		t.Fatalf("reindex should rebuild from the cache: %+v", rep)
	}
	if err := f.st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestQueryEmbeddingCache: a repeated query is embedded once, and takes the
// same ranking from the cached vector as from a fresh one.
func TestQueryEmbeddingCache(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	f.write("coder", "# Memory — Coder (coder)\n\n"+section(1)+section(2)+section(3))
	f.mine()
	f.emb.reset()
	first := f.search("deploy of service2", store.Filter{})
	again := f.search("deploy of service2", store.Filter{})
	other := f.search("handler for endpoint3", store.Filter{})
	got := f.emb.reset()
	want := []string{"deploy of service2", "handler for endpoint3"}
	if !slices.Equal(got, want) {
		t.Fatalf("embedded %q, want %q (a repeated query must come from the cache)", got, want)
	}
	if len(first) == 0 || !reflect.DeepEqual(first, again) {
		t.Fatalf("cached query ranked differently:\n%+v\n%+v", first, again)
	}
	if len(other) == 0 || other[0].ID == first[0].ID {
		t.Fatalf("a different query returned the first query's top hit: %+v", other)
	}
}

// TestSharedPalaceOrigins: two homes (two machines) mining into one index.
// Each removes only the files it mined: a file the other home mined is not
// gone just because this home does not have it.
// sharedStore makes a SQLite store stand in for a backend several homes
// share (PostgreSQL): only such backends lock sources, and only in them do
// other homes' files exist. A SQLite palace lives in its home, so there
// every file is the home's own.
type sharedStore struct{ *sqlite.Store }

func (sharedStore) Shared() bool { return true }

func TestSharedPalaceOrigins(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	open := func(origin, agent string) (*palace.Palace, home.Home, string) {
		h := home.Home{Root: t.TempDir()}
		if err := h.Init(); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(h.AgentsDir(), agent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "memory.md")
		if err := os.WriteFile(path, []byte("# Memory\n\n"+section(len(agent))), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := palace.New(ctx, h, sharedStore{st}, nil, palace.Options{Origin: origin})
		if err != nil {
			t.Fatal(err)
		}
		return p, h, path
	}
	pa, ha, annPath := open("machine-a", "ann")
	pb, hb, _ := open("machine-b", "bob")
	sources := func() []string {
		fs, err := st.Files(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Source+"@"+f.Origin)
		}
		return out
	}
	mine := func(p *palace.Palace, h home.Home) {
		if _, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mine(pa, ha)
	mine(pb, hb)
	both := []string{"hive/agents/ann/memory.md@machine-a", "hive/agents/bob/memory.md@machine-b"}
	if got := sources(); !slices.Equal(got, both) {
		t.Fatalf("after both mined: %q, want %q", got, both)
	}
	mine(pa, ha) // machine A has no bob: bob stays
	if got := sources(); !slices.Equal(got, both) {
		t.Fatalf("machine A's re-mine removed another machine's file: %q", got)
	}
	if err := os.Remove(annPath); err != nil {
		t.Fatal(err)
	}
	mine(pb, hb) // machine B has no ann either, but ann is not B's to remove
	if got := sources(); !slices.Equal(got, both) {
		t.Fatalf("machine B removed machine A's file: %q", got)
	}
	mine(pa, ha) // A's own file is gone on A: removed
	if got, want := sources(), both[1:]; !slices.Equal(got, want) {
		t.Fatalf("after A lost ann: %q, want %q", got, want)
	}
}

// TestReindexKeepsMineOptions: files mined from outside the hive
// with --wing, --agent and --room come back from `reindex` as they were
// mined: the index is rebuildable from the markdown and the file records.
func TestReindexKeepsMineOptions(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "plan.md"), []byte("## 2026-11-01 — plan\nroadmapheron for the quarter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalice text\n")
	f.mineHive()
	if _, err := f.p.Mine(ctx, notes, palace.MineOptions{Wing: "planning", Agent: "alice", Room: "roadmap"}); err != nil {
		t.Fatal(err)
	}
	// The same mine again costs one hash: the room is remembered too.
	if rep, err := f.p.Mine(ctx, notes, palace.MineOptions{Wing: "planning", Agent: "alice", Room: "roadmap"}); err != nil || rep.Unchanged != 1 {
		t.Fatalf("mining again with the same options: %+v, %v", rep, err)
	}
	before, beforeFiles := dumpIndex(t, f.st)
	if _, err := f.p.Reindex(ctx, palace.ReindexOptions{}); err != nil {
		t.Fatal(err)
	}
	after, afterFiles := dumpIndex(t, f.st)
	diffs := append(dumpDiff(before, after, "before reindex", "after reindex"), dumpDiff(beforeFiles, afterFiles, "files before", "files after")...)
	if len(diffs) > 0 {
		t.Errorf("reindex did not rebuild the index as mined:\n%s", strings.Join(diffs, "\n"))
	}
	hits, err := f.p.Search(ctx, palace.Query{Text: "roadmapheron", Filter: store.Filter{Room: "roadmap"}})
	if err != nil || len(hits) != 1 {
		t.Errorf("search in room roadmap after reindex: %v %v", hits, err)
	}
}

// TestTiedHitsRankByDrawerID: two agents hold the same note (same text,
// so the same BM25 and cosine scores); ties rank by drawer id. Which one a one-result search
// returns must depend on the files, not on the order they happened to be
// mined in: the incrementally mined index and a fresh reindex of the same
// files must answer alike.
func TestTiedHitsRankByDrawerID(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	note := "## 2026-11-01 — deploy\nthe tiedeploy runbook lives in the wiki\n"
	f.write("alice", "# Memory\n\n"+note)
	f.write("bob", "# Memory\n\n"+note)
	f.mineHive()
	// alice drops the note and writes it again: same files as before in
	// the end, but alice's drawer is now newer.
	f.write("alice", "# Memory\n\n## 2026-11-02 — other\nsomething else\n")
	f.mineHive()
	f.write("alice", "# Memory\n\n"+note)
	f.mineHive()
	assertMatchesFresh(t, f, "same files")
	ctx := context.Background()
	fp, st := hometest.FreshPalace(t, f.h, &countingEmbedder{}, palace.Options{})
	defer st.Close()
	for _, mode := range []string{palace.ModeLexical, palace.ModeVector, palace.ModeHybrid} {
		got, err := f.p.Search(ctx, palace.Query{Text: "tiedeploy runbook", Mode: mode, Results: 1})
		if err != nil {
			t.Fatal(err)
		}
		want, err := fp.Search(ctx, palace.Query{Text: "tiedeploy runbook", Mode: mode, Results: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(want) != 1 || got[0].ID != want[0].ID {
			t.Errorf("%s search, 1 result: the index returns %s's drawer, a fresh reindex of the same files %s's",
				mode, got[0].Agent, want[0].Agent)
		}
	}
}

// TestMineByteOrderMarkAndCROnlyFiles: what the header check (chunk.headerHasContent)
// decides for two unusual but valid files. A byte order mark is not text:
// "\ufeff## heading" must not give a drawer holding only the BOM, and
// "\ufeff# Title" is a title like "# Title" (no drawer for it). A file
// with old Mac line endings (CR only) is one long line to the parser; its
// words must still be searchable, or the file skipped with a reason — not
// silently indexed as nothing.
func TestMineByteOrderMarkAndCROnlyFiles(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.write("bom", "\ufeff## 2026-11-01 — bom\nbomkiwi text\n")
	f.write("bomtitle", "\ufeff# Memory — bomtitle\n\n## 2026-11-01 — t\nbomtitlekiwi\n")
	f.write("lonecr", "# Memory\r## 2026-11-01 — cr\rlonecrdingo notes\r")
	rep := f.mineHive()
	for _, agent := range []string{"bom", "bomtitle"} {
		ds, err := f.st.List(ctx, store.Filter{Agent: agent}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Room == "header" {
				t.Errorf("%s: a header drawer made of the BOM (and title) alone: heading %q text %q", agent, d.Heading, d.Text)
			}
		}
	}
	skipped := false
	for _, s := range rep.Skipped {
		skipped = skipped || strings.Contains(s.Path, "lonecr")
	}
	if n := len(f.lexical("lonecrdingo")); n != 1 && !skipped {
		t.Errorf("lonecr: a CR-only file is neither searchable (%d hits for a word in it) nor skipped with a reason", n)
	}
}

// skippedFor returns the reason a mine report gives for skipping path ("" if none).
func skippedFor(rep palace.MineReport, path string) string {
	for _, s := range rep.Skipped {
		if s.Path == path {
			return s.Reason
		}
	}
	return ""
}

// TestMineRefusesSymlinksOutOfTheHome: a memory.md that is a symlink to a
// file outside the home, or an agent directory that is one, is not mined
// — by the hive walk (reindex) nor by mining the file directly (the
// manager) — and both say why. Drawers it had before are dropped.
func TestMineRefusesSymlinksOutOfTheHome(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "real.md")
	if err := os.WriteFile(target, []byte("# Memory\n\n## 2026-11-01 — linked\nlinkedaardvark lives outside the home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outsideDir := filepath.Join(outside, "bob-real")
	if err := os.MkdirAll(outsideDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outsideDir, "memory.md"), []byte("# Memory\n\n## 2026-11-01 — b\nlinkedaardvark in a linked directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		link func(f *fixture) (mem string)
	}{
		{"memory.md links out", func(f *fixture) string {
			mem := f.write("alice", "# Memory\n\n## 2026-11-01 — a\nlinkedaardvark mined while a plain file\n")
			f.mineHive()
			if n := len(f.lexical("linkedaardvark")); n != 1 {
				t.Fatalf("the plain file: %d hits", n)
			}
			if err := os.Remove(mem); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, mem); err != nil {
				t.Fatal(err)
			}
			return mem
		}},
		{"agent directory links out", func(f *fixture) string {
			if err := os.Symlink(outsideDir, filepath.Join(f.h.AgentsDir(), "bob")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(f.h.AgentsDir(), "bob", "memory.md")
		}},
		{"dangling link out", func(f *fixture) string {
			dir := filepath.Join(f.h.AgentsDir(), "carol")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mem := filepath.Join(dir, "memory.md")
			if err := os.Symlink(filepath.Join(outside, "missing.md"), mem); err != nil {
				t.Fatal(err)
			}
			return mem
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			mem := tc.link(f)
			rep := f.mineHive()
			link := mem
			if reason := skippedFor(rep, link); !strings.Contains(reason, "leads out of the home") {
				// The walk meets the link itself: the directory when that is the link.
				link = filepath.Dir(mem)
				if reason = skippedFor(rep, link); !strings.Contains(reason, "leads out of the home") {
					t.Errorf("hive mine: no skip saying the link leads out of the home: %+v", rep.Skipped)
				}
			}
			if n := len(f.lexical("linkedaardvark")); n != 0 {
				t.Errorf("hive mine: %d hits for the text behind the link, want none", n)
			}
			rep, err := f.p.Mine(context.Background(), mem, palace.MineOptions{})
			if err != nil {
				t.Fatalf("mine the file directly: %v", err)
			}
			if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "leads out of the home") {
				t.Errorf("mine the file directly: %+v, want it skipped as leading out of the home", rep)
			}
			if n := len(f.lexical("linkedaardvark")); n != 0 {
				t.Errorf("direct mine: %d hits for the text behind the link, want none", n)
			}
		})
	}
}

// TestMineFollowsSymlinksInsideTheHomeOnce: links whose targets stay in
// the home are followed, and a file is indexed once, under its resolved
// path, however many links lead to it; the hive walk (reindex) and mining
// a memory file directly (the manager) agree.
func TestMineFollowsSymlinksInsideTheHomeOnce(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	shared := filepath.Join(f.h.Root, "shared")
	if err := os.MkdirAll(filepath.Join(shared, "dave"), 0o755); err != nil {
		t.Fatal(err)
	}
	// alice's memory.md links to a file elsewhere in the home.
	if err := os.WriteFile(filepath.Join(shared, "alice.md"), []byte("# Memory\n\n## 2026-11-01 — a\ninsidelinkotter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.h.AgentsDir(), "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	aliceMem := filepath.Join(f.h.AgentsDir(), "alice", "memory.md")
	if err := os.Symlink("../../../shared/alice.md", aliceMem); err != nil {
		t.Fatal(err)
	}
	// dave's directory links to a directory elsewhere in the home.
	if err := os.WriteFile(filepath.Join(shared, "dave", "memory.md"), []byte("# Memory\n\n## 2026-11-01 — d\ninsidelinkdirlynx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(shared, "dave"), filepath.Join(f.h.AgentsDir(), "dave")); err != nil {
		t.Fatal(err)
	}
	// erin's memory.md is a plain file, and two more links lead to it.
	erinMem := f.write("erin", "# Memory\n\n## 2026-11-01 — e\ntwolinkswombat\n")
	if err := os.Symlink("memory.md", filepath.Join(filepath.Dir(erinMem), "alias.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("erin", filepath.Join(f.h.AgentsDir(), "erin2")); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for word, agent := range map[string]string{"insidelinkotter": "alice", "insidelinkdirlynx": "dave", "twolinkswombat": "erin"} {
			hits := f.lexical(word)
			if len(hits) != 1 || hits[0].Agent != agent {
				var got []string
				for _, h := range hits {
					got = append(got, h.Source+" ("+h.Agent+")")
				}
				t.Errorf("%s: %q indexed as %v, want once, as %s's", when, word, got, agent)
			}
		}
	}
	rep := f.mineHive()
	if len(rep.Skipped) != 0 {
		t.Errorf("hive mine skipped links inside the home: %+v", rep.Skipped)
	}
	check("hive mine")
	for _, mem := range []string{aliceMem, filepath.Join(f.h.AgentsDir(), "dave", "memory.md"), erinMem, filepath.Join(f.h.AgentsDir(), "erin2", "memory.md")} {
		if _, err := f.p.Mine(ctx, mem, palace.MineOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	check("after mining each memory file directly")
	f.mineHive()
	check("hive mine again")
	assertMatchesFresh(t, f, "links inside the home")
}

// TestMineWithSymlinkLoops: links that loop (to the directory itself, to
// the home, to themselves) end the walk, each file is mined once, and
// links out of the home are skipped with a reason.
func TestMineWithSymlinkLoops(t *testing.T) {
	f := newFixture(t, nil)
	f.write("alice", "# Memory\n\n## 2026-11-01 — a\nalicegnu text\n")
	dir := filepath.Join(f.h.AgentsDir(), "alice")
	for name, to := range map[string]string{
		"loop":     ".",
		"up":       f.h.Root,
		"self":     "self",
		"root":     "/",
		"dangling": filepath.Join(t.TempDir(), "nope"),
	} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(f.h.AgentsDir(), filepath.Join(f.h.AgentsDir(), "loopagent")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var rep palace.MineReport
	go func() {
		var err error
		rep, err = f.p.Mine(context.Background(), f.h.HiveDir(), palace.MineOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mine did not finish within 10s with symlink loops in the tree")
	}
	if n := len(f.lexical("alicegnu")); n != 1 {
		t.Errorf("alice's drawer found %d times, want once (no mining through loops)", n)
	}
	for _, name := range []string{"root", "dangling", "self"} {
		if skippedFor(rep, filepath.Join(dir, name)) == "" {
			t.Errorf("link %s: not reported as skipped: %+v", name, rep.Skipped)
		}
	}
	assertMatchesFresh(t, f, "symlink loops")
}

// TestMineIndexesAFileOnceThroughASymlinkedHome: a home reached through a
// symlink (the usual case for /tmp on macOS, or a home moved to another
// disk and linked back). Mining an agent's file by its real path and by
// the home's path indexes it once, as that agent's.
func TestMineIndexesAFileOnceThroughASymlinkedHome(t *testing.T) {
	realDir := filepath.Join(t.TempDir(), "realhome")
	link := filepath.Join(t.TempDir(), "linkhome")
	if err := os.MkdirAll(realDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realDir, link); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ name, root, other string }{
		{"home is the link, file by real path", link, realDir},
		{"home is the real path, file through the link", realDir, link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := home.Home{Root: tc.root}
			_ = os.RemoveAll(filepath.Join(realDir, "hive"))
			_ = os.RemoveAll(filepath.Join(realDir, "palace"))
			if err := h.Init(); err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			p, err := palace.New(ctx, h, st, nil, palace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hometest.WriteMemory(t, h, "alice", "# Memory\n\n## 2026-11-01 — a\ntwospellingsyak\n")
			if _, err := p.Mine(ctx, h.HiveDir(), palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			otherPath := filepath.Join(tc.other, "hive", "agents", "alice", "memory.md")
			if _, err := p.Mine(ctx, otherPath, palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			hits, err := p.Search(ctx, palace.Query{Text: "twospellingsyak", Mode: palace.ModeLexical, Results: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, hh := range hits {
				got = append(got, hh.Source+" ("+hh.Wing+"/"+hh.Agent+")")
			}
			if len(hits) != 1 || hits[0].Agent != "alice" || hits[0].Source != "hive/agents/alice/memory.md" {
				t.Errorf("one file, indexed as %v; want once, as alice's hive/agents/alice/memory.md", got)
			}
		})
	}
}

// TestSearchFoldsArchiveTwinOfRestoredSection: after a restore the memory
// file again holds sections its archive keeps; search returns each such
// section once, as the live (restored) copy, while a section found only in
// the archive is still found there.
func TestSearchFoldsArchiveTwinOfRestoredSection(t *testing.T) {
	f := newFixture(t, nil)
	restored := "## 2026-10-01 — kickoff\nPicked the zephyrine codename for the project.\n"
	archivedOnly := "## 2026-09-01 — prehistory\nThe zephyrine prototype ran on a laptop.\n"
	f.write("alice", "# Memory — alice (alice)\n\n"+restored+"\n## 2026-10-02 — later\nOther work.\n")
	adir, err := f.h.ArchiveDir("alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(adir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(adir, "2026-10.md"), []byte(archivedOnly+"\n"+restored), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Mine(context.Background(), f.h.HiveDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	hits := f.search("zephyrine codename", store.Filter{Wing: "alice"})
	count := map[string]int{}
	for _, h := range hits {
		count[h.Heading]++
		if h.Heading == "2026-10-01 — kickoff" && h.Room == chunk.RoomArchive {
			t.Errorf("the archive copy of a restored section was returned: %+v", h)
		}
	}
	if count["2026-10-01 — kickoff"] != 1 {
		t.Errorf("restored section returned %d times, want once: %+v", count["2026-10-01 — kickoff"], hits)
	}
	if count["2026-09-01 — prehistory"] != 1 {
		t.Errorf("a section only in the archive is no longer found: %+v", hits)
	}
}

// An imported conversation with two strong matches for a query outranks
// one with a single match that is a little stronger on its own
// (rank.BoostSessions); in memory files the same matches keep their own order.
func TestSearchRanksAConversationWithSeveralMatchesAboveALoneMatch(t *testing.T) {
	f := newFixture(t, nil)
	alice := "## 2026-11-01 — jam\nMade quince marmalade, quince from the tree.\n"
	bob := "## 2026-11-02 — jam\nMade quince marmalade with lemon.\n\n" +
		"## 2026-11-03 — more jam\nThe quince marmalade set overnight.\n\n## 2026-11-04 — other\nFixed the bike.\n"
	for _, c := range []struct {
		file string
		room string
		want []string // agents of the first three hits
	}{
		{"sessions/2026-11-01-jam.md", chunk.RoomSession, []string{"bob", "bob", "alice"}},
		{"memory.md", chunk.RoomRecent, []string{"alice", "bob", "bob"}},
	} {
		for agent, body := range map[string]string{"alice": alice, "bob": bob} {
			filetest.Write(t, filepath.Join(f.h.AgentsDir(), agent, c.file), "# Notes\n\n"+body)
		}
		f.mine()
		hits := f.search("quince marmalade", store.Filter{Room: c.room})
		var got []string
		for _, h := range hits[:min(3, len(hits))] {
			got = append(got, h.Agent)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			for _, h := range hits {
				t.Logf("%s %s %q score %.3f", h.Agent, h.Room, h.Heading, h.Score)
			}
			t.Errorf("room %s: first hits from %v, want %v", c.room, got, c.want)
		}
	}
}
