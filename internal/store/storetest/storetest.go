// Package storetest is the conformance suite for palace backends: every
// implementation of store.Store runs Run from its own tests and must pass
// all of it, so that the SQLite and PostgreSQL palaces behave the same.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/store"
)

// Run runs the suite. open must return a new, empty store each time it is
// called; Run closes every store it opens (Close must tolerate a second
// call if open also registers one).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"FilesPrefix", testFilesPrefix},
		{"DrawersOf", testDrawersOf},
		{"UpdateMetadata", testUpdateMetadata},
		{"ApplyIsAtomic", testApplyIsAtomic},
		{"BadDrawers", testBadDrawers},
		{"Delete", testDelete},
		{"DeleteFile", testDeleteFile},
		{"Filters", testFilters},
		{"ScoresIgnoreTheScope", testScoresIgnoreTheScope},
		{"LexicalRanking", testLexicalRanking},
		{"LexicalTiesByID", testLexicalTiesByID},
		{"LexicalHostile", testLexicalHostile},
		{"VectorExact", testVectorExact},
		{"VectorFilters", testVectorFilters},
		{"VectorsFollowWrites", testVectorsFollowWrites},
		{"VectorTiesByID", testVectorTiesByID},
		{"LockSource", testLockSource},
		{"WrongDimension", testWrongDimension},
		{"ModelChange", testModelChange},
		{"EmbedCache", testEmbedCache},
		{"Scrub", testScrub},
		{"Stats", testStats},
		{"Reset", testReset},
		{"ConcurrentUse", testConcurrentUse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
			if err := s.Check(t.Context()); err != nil {
				t.Errorf("Check after %s: %v", tc.name, err)
			}
		})
	}
}

// minedAt has microsecond precision, the finest every backend keeps.
var minedAt = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func file(source, wing, agent string) store.File {
	return store.File{Source: source, Hash: "h-" + source, Size: 1234, MinedAt: minedAt, Wing: wing, Agent: agent, Origin: "laptop-1a2b3c", Room: "room-" + wing}
}

// drawer builds a drawer with every field set; LineStart follows n so that
// drawers of one file have a defined order.
func drawer(source string, n int, wing, room, agent, date, heading, text string) store.Drawer {
	return store.Drawer{
		ID:        fmt.Sprintf("%s#%d", source, n),
		Wing:      wing,
		Room:      room,
		Agent:     agent,
		Source:    source,
		Heading:   heading,
		LineStart: 10*n + 1,
		LineEnd:   10*n + 5,
		Date:      date,
		Hash:      fmt.Sprintf("hash-%s-%d", source, n),
		Text:      text,
		// Every field set: a backend that drops one fails the round trip.
		SupersededBy: fmt.Sprintf("later-%d", n),
	}
}

func apply(t *testing.T, s store.Store, u store.FileUpdate) {
	t.Helper()
	if err := s.Apply(t.Context(), u); err != nil {
		t.Fatalf("Apply(%s): %v", u.File.Source, err)
	}
}

func ids(ds []store.Drawer) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func scoredIDs(ss []store.Scored) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func sameDrawers(t *testing.T, what string, got, want []store.Drawer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d drawers %v, want %d %v", what, len(got), ids(got), len(want), ids(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if len(g.Vector) != 0 {
			t.Errorf("%s: drawer %s came back with a vector", what, g.ID)
		}
		g.Vector, w.Vector = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: drawer %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

func sameFile(t *testing.T, got, want store.File) {
	t.Helper()
	if !got.MinedAt.Equal(want.MinedAt) {
		t.Errorf("file %s: MinedAt %v, want %v", want.Source, got.MinedAt, want.MinedAt)
	}
	got.MinedAt, want.MinedAt = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("file:\n got %+v\nwant %+v", got, want)
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	const src = "hive/agents/ada/memory.md"
	f := file(src, "ada", "ada")
	ds := []store.Drawer{
		drawer(src, 2, "ada", "recent", "ada", "2026-01-02", "2026-01-02 — fixed login", "The login test was flaky because of a race."),
		drawer(src, 0, "ada", "pinned", "ada", "", "📌 Durable facts (pinned — never condensed)", "- Deploys go through CI only."),
		drawer(src, 1, "ada", "condensed", "ada", "", "🗜 Condensed history", "Ünïcödé text, quotes \" ' and a NUL-free line."),
	}
	apply(t, s, store.FileUpdate{File: f, Insert: ds})

	got, err := s.GetFile(ctx, src)
	if err != nil {
		t.Fatalf("GetFile: %v", err)
	}
	sameFile(t, got, f)
	if _, err := s.GetFile(ctx, "nope.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetFile(missing) = %v, want ErrNotFound", err)
	}

	byLine := []store.Drawer{ds[1], ds[2], ds[0]}
	list, err := s.Drawers(ctx, src)
	if err != nil {
		t.Fatalf("Drawers: %v", err)
	}
	sameDrawers(t, "Drawers", list, byLine)
	if list, err := s.Drawers(ctx, "other.md"); err != nil || len(list) != 0 {
		t.Errorf("Drawers(other) = %v, %v; want none", ids(list), err)
	}

	want := []store.Drawer{ds[0], ds[2], ds[1]}
	gotDs, err := s.Get(ctx, []string{ds[0].ID, "missing", ds[2].ID, ds[1].ID})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	sameDrawers(t, "Get", gotDs, want)
	if gotDs, err := s.Get(ctx, nil); err != nil || len(gotDs) != 0 {
		t.Errorf("Get(nil) = %v, %v", ids(gotDs), err)
	}

	all, err := s.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	sameDrawers(t, "List", all, byLine)
	two, err := s.List(ctx, store.Filter{}, 2)
	if err != nil {
		t.Fatalf("List limit: %v", err)
	}
	sameDrawers(t, "List limit 2", two, byLine[:2])

	// Re-applying the same file record with new values overwrites it (the
	// origin too: the home that mined it last owns it).
	f2 := f
	f2.Hash, f2.Size, f2.MinedAt, f2.Origin, f2.Room = "h2", 99, minedAt.Add(time.Hour), "server-4d5e6f", ""
	apply(t, s, store.FileUpdate{File: f2})
	if got, err := s.GetFile(ctx, src); err != nil {
		t.Fatalf("GetFile: %v", err)
	} else {
		sameFile(t, got, f2)
	}

	// Many ids in one Get (more than any one SQL statement should bind).
	many := make([]store.Drawer, 1200)
	manyIDs := make([]string, len(many))
	for i := range many {
		many[i] = drawer("bulk.md", i, "w", "r", "a", "", "h", "bulk text")
		manyIDs[len(many)-1-i] = many[i].ID
	}
	apply(t, s, store.FileUpdate{File: file("bulk.md", "w", "a"), Insert: many})
	gotMany, err := s.Get(ctx, manyIDs)
	if err != nil {
		t.Fatalf("Get 1200: %v", err)
	}
	if !slices.Equal(ids(gotMany), manyIDs) {
		t.Errorf("Get 1200 ids did not come back in the order asked")
	}
}

func testFilesPrefix(t *testing.T, s store.Store) {
	sources := []string{"hive/agents/a_b/memory.md", "hive/agents/aXb/memory.md", "hive/agents/A_b/memory.md", "hive/archive/a_b/1.md", "hive/agents/50%/memory.md"}
	for _, src := range sources {
		apply(t, s, store.FileUpdate{File: file(src, "w", "a")})
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"hive/agents/50%/memory.md", "hive/agents/A_b/memory.md", "hive/agents/aXb/memory.md", "hive/agents/a_b/memory.md", "hive/archive/a_b/1.md"}},
		{"hive/agents/a_", []string{"hive/agents/a_b/memory.md"}},
		{"hive/agents/5", []string{"hive/agents/50%/memory.md"}},
		{"hive/agents/50%", []string{"hive/agents/50%/memory.md"}},
		{"hive/agents/%", nil},
		{"hive/archive/", []string{"hive/archive/a_b/1.md"}},
		{"HIVE", nil},
		{"hive/agents/a_b/memory.md", []string{"hive/agents/a_b/memory.md"}},
		{"zzz", nil},
	}
	for _, tt := range tests {
		files, err := s.Files(t.Context(), tt.prefix)
		if err != nil {
			t.Fatalf("Files(%q): %v", tt.prefix, err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.Source)
		}
		sort.Strings(got) // the order is not part of the contract
		if !slices.Equal(got, tt.want) {
			t.Errorf("Files(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

func testDrawersOf(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Byte order puts "B.md" before "a.md" (a locale's collation would
	// not); "zz.md" sorts after the padding below, "B.md" and "a.md"
	// before it.
	a := []store.Drawer{drawer("a.md", 2, "w", "session", "ag", "", "h", "third"), drawer("a.md", 0, "w", "session", "ag", "", "h", "first"), drawer("a.md", 1, "w", "session", "ag", "", "h", "second")}
	b := []store.Drawer{drawer("B.md", 0, "w", "session", "ag", "", "h", "only")}
	z := []store.Drawer{drawer("zz.md", 0, "w", "session", "ag", "", "h", "last")}
	other := []store.Drawer{drawer("other.md", 0, "w", "session", "ag", "", "h", "not asked")}
	apply(t, s, store.FileUpdate{File: file("a.md", "w", "ag"), Insert: a})
	apply(t, s, store.FileUpdate{File: file("B.md", "w", "ag"), Insert: b})
	apply(t, s, store.FileUpdate{File: file("zz.md", "w", "ag"), Insert: z})
	apply(t, s, store.FileUpdate{File: file("other.md", "w", "ag"), Insert: other})
	apply(t, s, store.FileUpdate{File: file("empty.md", "w", "ag")})

	var padding []string
	for i := range store.MaxSources {
		padding = append(padding, fmt.Sprintf("pad/%04d.md", i))
	}
	for _, tt := range []struct {
		name    string
		sources []string
		want    []store.Drawer
	}{
		{"none", nil, nil},
		{"one", []string{"a.md"}, []store.Drawer{a[1], a[2], a[0]}},
		{"several, repeated, unknown and empty", []string{"zz.md", "a.md", "missing.md", "empty.md", "B.md", "a.md"}, []store.Drawer{b[0], a[1], a[2], a[0], z[0]}},
		{"not storable everywhere", []string{"a\x00.md", "\xff.md", "B.md"}, b},
		{"more than one statement holds", append(append([]string{"zz.md"}, padding...), "a.md"), []store.Drawer{a[1], a[2], a[0], z[0]}},
	} {
		got, err := s.DrawersOf(ctx, tt.sources)
		if err != nil {
			t.Fatalf("DrawersOf(%s): %v", tt.name, err)
		}
		sameDrawers(t, "DrawersOf("+tt.name+")", got, tt.want)
	}
}

func testUpdateMetadata(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m", 4); err != nil {
		t.Fatal(err)
	}
	const src = "a.md"
	d := drawer(src, 0, "w1", "recent", "ag1", "2026-01-01", "apples", "pears and plums")
	d.Vector = []float32{1, 0, 0, 0}
	apply(t, s, store.FileUpdate{File: file(src, "w1", "ag1"), Insert: []store.Drawer{d}})

	u := d
	u.Wing, u.Room, u.Agent, u.Heading, u.LineStart, u.LineEnd, u.Date = "w2", "archive", "ag2", "bananas", 40, 50, "2026-02-02"
	u.SupersededBy = "a later drawer"
	// Text, hash and vector in an update are ignored: only metadata moves.
	u.Text, u.Hash, u.Vector = "changed text", "changed hash", []float32{0, 1, 0, 0}
	apply(t, s, store.FileUpdate{File: file(src, "w2", "ag2"), Update: []store.Drawer{u}})

	got, err := s.Get(ctx, []string{d.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := u
	want.Text, want.Hash = d.Text, d.Hash
	sameDrawers(t, "after update", got, []store.Drawer{want})

	// The full-text index follows the heading; the text is unchanged.
	for q, n := range map[string]int{"bananas": 1, "apples": 0, "plums": 1, "changed": 0} {
		res, err := s.Lexical(ctx, q, store.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != n {
			t.Errorf("Lexical(%q) after update = %v, want %d hits", q, scoredIDs(res), n)
		}
	}
	// Lexical filters see the new metadata.
	for _, tc := range []struct {
		f store.Filter
		n int
	}{{store.Filter{Wing: "w2", Room: "archive", Agent: "ag2"}, 1}, {store.Filter{Wing: "w1"}, 0}, {store.Filter{Agent: "ag1"}, 0}, {store.Filter{Room: "recent"}, 0}} {
		if res, err := s.Lexical(ctx, "plums", tc.f, 10); err != nil || len(res) != tc.n {
			t.Errorf("Lexical(plums, %+v) after update = %v, %v; want %d hits", tc.f, scoredIDs(res), err, tc.n)
		}
	}
	// An update of the line range alone keeps the drawer searchable.
	u2 := u
	u2.LineStart, u2.LineEnd = 100, 110
	apply(t, s, store.FileUpdate{File: file(src, "w2", "ag2"), Update: []store.Drawer{u2}})
	if res, err := s.Lexical(ctx, "plums", store.Filter{Wing: "w2"}, 10); err != nil || len(res) != 1 {
		t.Errorf("Lexical after a line-range update = %v, %v", scoredIDs(res), err)
	}
	if got, err := s.Drawers(ctx, src); err != nil || len(got) != 1 || got[0].LineStart != 100 || got[0].LineEnd != 110 {
		t.Errorf("Drawers after a line-range update = %+v, %v", got, err)
	}
	// The vector stayed, and filters see the new metadata.
	res, err := s.Vector(ctx, []float32{1, 0, 0, 0}, store.Filter{Wing: "w2", Room: "archive", Agent: "ag2", Since: "2026-02-01"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || math.Abs(res[0].Score-1) > 1e-6 {
		t.Errorf("Vector after metadata update = %+v, want %s with score 1", res, d.ID)
	}
	if res, _ := s.Vector(ctx, []float32{1, 0, 0, 0}, store.Filter{Wing: "w1"}, 5); len(res) != 0 {
		t.Errorf("Vector in the old wing still finds %v", scoredIDs(res))
	}
	if miss, err := s.MissingVectors(ctx, 0); err != nil || len(miss) != 0 {
		t.Errorf("MissingVectors after metadata update = %v, %v", ids(miss), err)
	}
}

func testApplyIsAtomic(t *testing.T, s store.Store) {
	ctx := t.Context()
	const src = "a.md"
	d0 := drawer(src, 0, "w", "r", "a", "", "h", "original text")
	f := file(src, "w", "a")
	apply(t, s, store.FileUpdate{File: f, Insert: []store.Drawer{d0}})

	f2 := f
	f2.Hash = "new hash"
	bad := []store.FileUpdate{
		// Inserting an id that exists.
		{File: f2, Delete: []string{}, Insert: []store.Drawer{drawer(src, 1, "w", "r", "a", "", "h", "new"), d0}},
		// Updating an id that does not.
		{File: f2, Delete: []string{d0.ID}, Update: []store.Drawer{drawer(src, 7, "w", "r", "a", "", "h", "x")}},
	}
	for i, u := range bad {
		if err := s.Apply(ctx, u); err == nil {
			t.Errorf("bad update %d: Apply succeeded", i)
		}
		got, err := s.GetFile(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hash != f.Hash {
			t.Errorf("bad update %d: file record changed to %+v", i, got)
		}
		ds, err := s.Drawers(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		sameDrawers(t, fmt.Sprintf("drawers after bad update %d", i), ds, []store.Drawer{d0})
		if res, err := s.Lexical(ctx, "new", store.Filter{}, 5); err != nil || len(res) != 0 {
			t.Errorf("bad update %d left full-text entries: %v, %v", i, scoredIDs(res), err)
		}
	}

	// A canceled context writes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Apply(cctx, store.FileUpdate{File: f2, Insert: []store.Drawer{drawer(src, 3, "w", "r", "a", "", "h", "t")}}); err == nil {
		t.Errorf("Apply with a canceled context succeeded")
	}
	if ds, _ := s.Drawers(ctx, src); len(ds) != 1 {
		t.Errorf("canceled Apply left %d drawers", len(ds))
	}
}

func testBadDrawers(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := file("a.md", "w", "a")
	good := drawer("a.md", 0, "w", "r", "a", "", "h", "t")
	mod := func(fn func(d *store.Drawer)) store.Drawer {
		d := good
		fn(&d)
		return d
	}
	tests := []struct {
		name string
		u    store.FileUpdate
	}{
		{"no source", store.FileUpdate{File: store.File{}, Insert: []store.Drawer{good}}},
		{"empty id", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.ID = "" })}}},
		{"other file's drawer", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.Source = "b.md" })}}},
		{"bad date", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.Date = "2026-13-40" })}}},
		{"date with time", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.Date = "2026-01-01T00:00" })}}},
		{"lines backwards", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.LineStart, d.LineEnd = 9, 3 })}}},
		{"vector without model", store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.Vector = []float32{1, 0} })}}},
	}
	for _, tt := range tests {
		if err := s.Apply(ctx, tt.u); err == nil {
			t.Errorf("%s: Apply succeeded", tt.name)
		}
	}
	if st, err := s.Stats(ctx); err != nil || st.Drawers != 0 || st.Files != 0 {
		t.Errorf("bad drawers were stored: %+v, %v", st, err)
	}
	// A drawer with no Source belongs to the file being applied.
	apply(t, s, store.FileUpdate{File: f, Insert: []store.Drawer{mod(func(d *store.Drawer) { d.Source = "" })}})
	if ds, err := s.Drawers(ctx, "a.md"); err != nil || len(ds) != 1 || ds[0].Source != "a.md" {
		t.Errorf("drawer without source: %+v, %v", ds, err)
	}
	if _, err := s.List(ctx, store.Filter{Since: "yesterday"}, 0); err == nil {
		t.Errorf("List with a malformed date bound succeeded")
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m", 2); err != nil {
		t.Fatal(err)
	}
	const src = "a.md"
	f := file(src, "w", "a")
	d0 := drawer(src, 0, "w", "r", "a", "", "zebra", "zebra stripes")
	d1 := drawer(src, 1, "w", "r", "a", "", "lion", "lion mane")
	d0.Vector, d1.Vector = []float32{1, 0}, []float32{0, 1}
	apply(t, s, store.FileUpdate{File: f, Insert: []store.Drawer{d0, d1}})
	apply(t, s, store.FileUpdate{File: f, Delete: []string{d0.ID, "never-existed"}})

	if got, _ := s.Get(ctx, []string{d0.ID, d1.ID}); !slices.Equal(ids(got), []string{d1.ID}) {
		t.Errorf("Get after delete = %v", ids(got))
	}
	if res, err := s.Lexical(ctx, "zebra", store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Lexical finds a deleted drawer: %v, %v", scoredIDs(res), err)
	}
	if res, err := s.Vector(ctx, []float32{1, 0}, store.Filter{}, 5); err != nil || !slices.Equal(scoredIDs(res), []string{d1.ID}) {
		t.Errorf("Vector after delete = %v, %v", scoredIDs(res), err)
	}

	// Delete and insert of one id in one update replaces the drawer.
	r := d1
	r.Text, r.Heading, r.Vector = "tiger", "tiger", []float32{-1, 0}
	apply(t, s, store.FileUpdate{File: f, Delete: []string{d1.ID}, Insert: []store.Drawer{r}})
	if res, _ := s.Lexical(ctx, "lion", store.Filter{}, 5); len(res) != 0 {
		t.Errorf("replaced text still found: %v", scoredIDs(res))
	}
	if res, _ := s.Lexical(ctx, "tiger", store.Filter{}, 5); !slices.Equal(scoredIDs(res), []string{d1.ID}) {
		t.Errorf("replacement text not found: %v", scoredIDs(res))
	}
	res, err := s.Vector(ctx, []float32{-1, 0}, store.Filter{}, 5)
	if err != nil || len(res) != 1 || math.Abs(res[0].Score-1) > 1e-6 {
		t.Errorf("replacement vector: %+v, %v", res, err)
	}
}

func testDeleteFile(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m", 2); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"a.md", "b.md"} {
		var ds []store.Drawer
		for i := range 3 {
			d := drawer(src, i, "w", "r", "a", "", "common", "shared words "+src)
			d.Vector = []float32{1, float32(i)}
			ds = append(ds, d)
		}
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ds})
	}
	if err := s.DeleteFile(ctx, "a.md"); err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	if err := s.DeleteFile(ctx, "never.md"); err != nil {
		t.Errorf("DeleteFile(unknown) = %v, want nil", err)
	}
	if _, err := s.GetFile(ctx, "a.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetFile after DeleteFile = %v", err)
	}
	if ds, _ := s.Drawers(ctx, "a.md"); len(ds) != 0 {
		t.Errorf("drawers survive DeleteFile: %v", ids(ds))
	}
	if ds, _ := s.Drawers(ctx, "b.md"); len(ds) != 3 {
		t.Errorf("other file lost drawers: %v", ids(ds))
	}
	for name, res := range map[string]func() ([]store.Scored, error){
		"Lexical": func() ([]store.Scored, error) { return s.Lexical(ctx, "shared words", store.Filter{}, 10) },
		"Vector":  func() ([]store.Scored, error) { return s.Vector(ctx, []float32{1, 0}, store.Filter{}, 10) },
	} {
		got, err := res()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if strings.HasPrefix(g.ID, "a.md") {
				t.Errorf("%s finds %s after DeleteFile", name, g.ID)
			}
		}
		if len(got) != 3 {
			t.Errorf("%s after DeleteFile: %d hits, want 3", name, len(got))
		}
	}
	if st, _ := s.Stats(ctx); st.Files != 1 || st.Drawers != 3 || st.Vectors != 3 {
		t.Errorf("Stats after DeleteFile = %+v", st)
	}
}

// grid builds drawers over every combination of two wings, rooms, agents
// and four dates (one of them none), all sharing the word "common" and each
// with a distinct vector.
func grid(t *testing.T, s store.Store, dim int, seed uint64) []store.Drawer {
	t.Helper()
	if err := s.SetModel(t.Context(), "grid-model", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var all []store.Drawer
	bySource := map[string][]store.Drawer{}
	n := 0
	for _, wing := range []string{"w1", "w2"} {
		for _, room := range []string{"recent", "archive"} {
			for _, agent := range []string{"ada", "bob"} {
				for _, date := range []string{"", "2025-12-31", "2026-01-15", "2026-02-01"} {
					src := "hive/" + wing + ".md"
					d := drawer(src, n, wing, room, agent, date, "note "+room, "common text for "+agent)
					d.Vector = UnitVector(rng, dim)
					bySource[src] = append(bySource[src], d)
					all = append(all, d)
					n++
				}
			}
		}
	}
	for src, ds := range bySource {
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ds})
	}
	return all
}

var filterCases = []store.Filter{
	{},
	{Wing: "w1"},
	{Room: "archive"},
	{Agent: "bob"},
	{Wing: "w2", Room: "recent", Agent: "ada"},
	{Since: "2026-01-01"},
	{Since: "2026-01-15"},
	{Until: "2026-01-15"},
	{Until: "2025-12-31"},
	{Since: "2026-01-01", Until: "2026-01-31"},
	{Since: "2026-03-01"},
	{Wing: "w1", Since: "2025-01-01", Until: "2030-01-01"},
	{Wing: "nope"},
	{Agent: "'; DROP TABLE drawers; --"},
	{Room: "ROOM"},
}

func testFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	all := grid(t, s, 8, 7)
	for _, f := range filterCases {
		var want []string
		for _, d := range all {
			if f.Matches(d) {
				want = append(want, d.ID)
			}
		}
		sort.Strings(want)

		list, err := s.List(ctx, f, 0)
		if err != nil {
			t.Fatalf("List(%+v): %v", f, err)
		}
		got := ids(list)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("List(%+v) = %v, want %v", f, got, want)
		}

		for name, search := range map[string]func() ([]store.Scored, error){
			"Lexical": func() ([]store.Scored, error) { return s.Lexical(ctx, "common", f, 1000) },
			"Vector":  func() ([]store.Scored, error) { return s.Vector(ctx, all[0].Vector, f, 1000) },
		} {
			res, err := search()
			if err != nil {
				t.Fatalf("%s(%+v): %v", name, f, err)
			}
			got = scoredIDs(res)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s(%+v) = %v, want %v", name, f, got, want)
			}
		}
	}
	for _, f := range []store.Filter{{Since: "2026-1-1"}, {Until: "tomorrow"}, {Since: "2026-02-30"}} {
		if _, err := s.List(ctx, f, 0); err == nil {
			t.Errorf("List(%+v) accepted a malformed date", f)
		}
		if _, err := s.Lexical(ctx, "common", f, 5); err == nil {
			t.Errorf("Lexical(%+v) accepted a malformed date", f)
		}
		if _, err := s.Vector(ctx, all[0].Vector, f, 5); err == nil {
			t.Errorf("Vector(%+v) accepted a malformed date", f)
		}
	}
}

// testScoresIgnoreTheScope holds that a drawer's lexical and vector
// scores for a query are the same whatever the filter it was found under
// (BM25's statistics are the whole palace's; a filter only leaves drawers
// out), so that candidates ranked in different scopes (search's date
// windows) make one ranking.
func testScoresIgnoreTheScope(t *testing.T, s store.Store) {
	ctx := t.Context()
	const dim = 8
	if err := s.SetModel(ctx, "scope-model", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	vocab := Vocabulary(rng, 40)
	bySource := map[string][]store.Drawer{}
	for n := range 240 {
		date := ""
		if rng.IntN(5) > 0 {
			date = fmt.Sprintf("2026-01-%02d", 1+rng.IntN(28))
		}
		words := make([]string, 3+rng.IntN(30))
		for i := range words {
			words[i] = vocab[rng.IntN(len(vocab))]
		}
		wing := []string{"w1", "w2"}[rng.IntN(2)]
		src := "hive/" + wing + ".md"
		d := drawer(src, n, wing, "recent", "ada", date, vocab[rng.IntN(len(vocab))], strings.Join(words, " "))
		d.Vector = UnitVector(rng, dim)
		bySource[src] = append(bySource[src], d)
	}
	for src, ds := range bySource {
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ds})
	}
	query := strings.Join([]string{vocab[0], vocab[7], vocab[19], vocab[33]}, " ")
	qvec := UnitVector(rng, dim)
	for _, c := range []struct {
		name   string
		search func(store.Filter, int) ([]store.Scored, error)
		// tol is the relative difference allowed: float64 rounding for
		// BM25, float32 for a cosine (a row's dot product is summed in
		// another order depending on the rows batched with it).
		tol float64
	}{
		{"Lexical", func(f store.Filter, k int) ([]store.Scored, error) { return s.Lexical(ctx, query, f, k) }, 1e-9},
		{"Vector", func(f store.Filter, k int) ([]store.Scored, error) { return s.Vector(ctx, qvec, f, k) }, 1e-6},
	} {
		name, search := c.name, c.search
		all, err := search(store.Filter{}, 1000)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(all) < 100 {
			t.Fatalf("%s: %d hits of 240 drawers", name, len(all))
		}
		score := map[string]float64{}
		for _, r := range all {
			score[r.ID] = r.Score
		}
		for _, f := range []store.Filter{
			{Since: "2026-01-10", Until: "2026-01-12"},
			{Since: "2026-01-20"},
			{Until: "2026-01-03"},
			{Wing: "w1", Since: "2026-01-05", Until: "2026-01-15"},
			{Wing: "w2"},
		} {
			for _, k := range []int{3, 1000} {
				res, err := search(f, k)
				if err != nil {
					t.Fatalf("%s(%+v, %d): %v", name, f, k, err)
				}
				if len(res) == 0 {
					t.Fatalf("%s(%+v, %d): no hit", name, f, k)
				}
				for _, r := range res {
					if want, ok := score[r.ID]; !ok || math.Abs(r.Score-want) > c.tol*max(1, math.Abs(want)) {
						t.Errorf("%s(%+v, %d): %s scores %v, %v unfiltered", name, f, k, r.ID, r.Score, want)
					}
				}
			}
		}
	}
}

func testLexicalRanking(t *testing.T, s store.Store) {
	ctx := t.Context()
	const src = "a.md"
	texts := []struct{ heading, text string }{
		0: {"notes", "the deploy pipeline failed again on friday"},
		1: {"notes", "deploy deploy pipeline kubernetes rollback"},
		2: {"notes", "kubernetes cluster upgrade went fine"},
		3: {"notes", "lunch was good and the weather was fine"},
		4: {"notes", "she runs the benchmarks every night"},
		5: {"notes", "le café était fermé"},
		6: {"notes", "привет мир, как дела"},
		7: {"postgres", "tuning notes for the database"},
		8: {"notes", "tuning notes for the postgres database"},
		9: {"notes", "weather weather weather fine fine fine lunch"},
	}
	var ds []store.Drawer
	for i, x := range texts {
		ds = append(ds, drawer(src, i, "w", "r", "a", "", x.heading, x.text))
	}
	apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ds})
	id := func(i int) string { return ds[i].ID }

	tests := []struct {
		query string
		first string   // expected best hit ("" for none)
		all   []string // expected hit set, if checked
	}{
		{"deploy rollback", id(1), []string{id(0), id(1)}},
		{"kubernetes rollback", id(1), []string{id(1), id(2)}},
		{"running", id(4), []string{id(4)}},
		{"RUNS!", id(4), []string{id(4)}},
		{"cafe", id(5), []string{id(5)}},
		{"ÉTAIT", id(5), []string{id(5)}},
		{"привет", id(6), []string{id(6)}},
		{"postgres", id(7), []string{id(7), id(8)}},
		{"the", "any", []string{id(0), id(3), id(4), id(7), id(8)}}, // only stopwords: searched anyway
		{"pipeline failed friday", id(0), nil},
		{"nothing matches this", "", nil},
		{"", "", nil},
		{"   ...!!!   ", "", nil},
	}
	for _, tt := range tests {
		res, err := s.Lexical(ctx, tt.query, store.Filter{}, 10)
		if err != nil {
			t.Fatalf("Lexical(%q): %v", tt.query, err)
		}
		if tt.first == "" {
			if len(res) != 0 {
				t.Errorf("Lexical(%q) = %v, want none", tt.query, scoredIDs(res))
			}
			continue
		}
		if len(res) == 0 || tt.first != "any" && res[0].ID != tt.first {
			t.Errorf("Lexical(%q) = %v, want %s first", tt.query, scoredIDs(res), tt.first)
		}
		if tt.all != nil {
			got := scoredIDs(res)
			sort.Strings(got)
			if !slices.Equal(got, tt.all) {
				t.Errorf("Lexical(%q) hits %v, want %v", tt.query, got, tt.all)
			}
		}
		for i, r := range res {
			if r.Rank != i+1 {
				t.Errorf("Lexical(%q) hit %d has Rank %d", tt.query, i, r.Rank)
			}
			if !(r.Score > 0) || math.IsInf(r.Score, 0) {
				t.Errorf("Lexical(%q) hit %s has score %v, want a positive number", tt.query, r.ID, r.Score)
			}
			if i > 0 && r.Score > res[i-1].Score {
				t.Errorf("Lexical(%q) scores not descending: %v", tt.query, res)
			}
		}
	}
	// k limits the result.
	res, err := s.Lexical(ctx, "notes fine weather", store.Filter{}, 2)
	if err != nil || len(res) != 2 {
		t.Errorf("Lexical k=2 = %v, %v", res, err)
	}
	if res, err := s.Lexical(ctx, "deploy", store.Filter{}, 0); err != nil || len(res) != 0 {
		t.Errorf("Lexical k=0 = %v, %v", res, err)
	}
}

// hostileQueries are strings that mean something to some query language.
func hostileQueries() []string {
	return []string{
		`"`, `""`, `"""`, `*`, `a*`, `NEAR(a b)`, `NEAR`, `a -b`, `-a`, `(`, `)`, `()`,
		`AND OR NOT`, `a AND`, `OR`, `NOT a`, `'; DROP TABLE drawers; --`,
		`heading:foo`, `text:deploy`, `{heading text}: deploy`, `^x`, `^`, `+`, `a + b`,
		`\`, `%`, `_`, `$1`, `?`, `:name`, `@p`, `/* comment */`, `--`, `;`,
		"deploy\x00rollback", "\x00", "\xff\xfe invalid utf8", "tab\tnew\nline",
		"日本語のテキスト", "emoji 🚀🔥", "ﬁ ligature", "e\u0301", "\u0301", "\u200b",
		`"deploy" OR "x"`, `deploy"`, `"deploy`, `d"e"p"l"o"y`,
		strings.Repeat("deploy ", 2000),
		strings.Repeat("x", 10*1024),
		strings.Repeat(`" `, 3000),
		strings.Repeat("w", 40) + strings.Repeat(" a b c d e f g h i j", 20),
	}
}

// testLexicalTiesByID: drawers that score alike rank by id, whatever the
// order they were written in, at every cut k: a search must answer from
// the files, not from the order they happened to be mined in.
func testLexicalTiesByID(t *testing.T, s store.Store) {
	const note = "the tiedeploy runbook lives in the wiki"
	best := drawer("best.md", 0, "w", "r", "a", "", "notes", "tiedeploy tiedeploy runbook wiki")
	apply(t, s, store.FileUpdate{File: file("best.md", "w", "a"), Insert: []store.Drawer{best}})
	var tied []string
	for _, n := range []int{3, 0, 5, 1, 4, 2} {
		src := fmt.Sprintf("f%d.md", n)
		d := drawer(src, 0, "w", "r", "a", "", "notes", note)
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: []store.Drawer{d}})
		tied = append(tied, d.ID)
	}
	worse := drawer("worse.md", 0, "w", "r", "a", "", "notes", note+" and much more text about other things entirely")
	apply(t, s, store.FileUpdate{File: file("worse.md", "w", "a"), Insert: []store.Drawer{worse}})
	slices.Sort(tied)
	want := append(append([]string{best.ID}, tied...), worse.ID)
	for _, q := range []string{"tiedeploy", "tiedeploy wiki", "runbook tiedeploy"} {
		for k := 1; k <= len(want)+1; k++ {
			got, err := s.Lexical(t.Context(), q, store.Filter{}, k)
			if err != nil {
				t.Fatalf("Lexical(%q, k=%d): %v", q, k, err)
			}
			ids := make([]string, len(got))
			for i, sc := range got {
				ids[i] = sc.ID
			}
			if w := want[:min(k, len(want))]; !slices.Equal(ids, w) {
				t.Errorf("Lexical(%q, k=%d) = %v, want %v (ties by id)", q, k, ids, w)
			}
		}
	}
}

func testLexicalHostile(t *testing.T, s store.Store) {
	ctx := t.Context()
	const src = "a.md"
	ds := []store.Drawer{
		drawer(src, 0, "w", "r", "a", "", "deploy", "deploy rollback foo x b a"),
		drawer(src, 1, "w", "r", "a", "", "heading", "text near and or not drop table drawers"),
	}
	apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ds})
	for _, q := range hostileQueries() {
		name := q
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Lexical(%q) panicked: %v", name, r)
				}
			}()
			res, err := s.Lexical(ctx, q, store.Filter{}, 10)
			if err != nil {
				t.Errorf("Lexical(%q): %v", name, err)
			}
			for _, r := range res {
				if r.ID != ds[0].ID && r.ID != ds[1].ID {
					t.Errorf("Lexical(%q) returned unknown id %q", name, r.ID)
				}
			}
			// As filter values, hostile strings must not be syntax either
			// (bytes a text column cannot hold may be refused).
			if utf8.ValidString(q) && !strings.ContainsRune(q, 0) {
				if _, err := s.Lexical(ctx, "deploy", store.Filter{Wing: q, Room: q, Agent: q}, 10); err != nil {
					t.Errorf("Lexical with hostile filter %q: %v", name, err)
				}
			}
		}()
	}
	// Still intact.
	if st, err := s.Stats(ctx); err != nil || st.Drawers != 2 {
		t.Errorf("after hostile queries: %+v, %v", st, err)
	}
	// The words themselves are still found, e.g. "drop table" finds drawer 1.
	if res, err := s.Lexical(ctx, "'; DROP TABLE drawers; --", store.Filter{}, 10); err != nil || len(res) == 0 || res[0].ID != ds[1].ID {
		t.Errorf("Lexical(drop table) = %v, %v; want %s first", res, err, ds[1].ID)
	}
}

// MustOpen is the store open returns, failing the test on an error; it is
// closed when the test ends (closing it before is harmless).
func MustOpen[S store.Store](t testing.TB, open func() (S, error)) S {
	t.Helper()
	s, err := open()
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// UnitVector is a random vector of length 1 in dim dimensions (normal
// components, normalised in float64).
func UnitVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// BruteForce is the reference vector ranking every backend is held to:
// float64 dot products over every drawer in scope (those with a vector),
// best first, ties by id, at most k.
func BruteForce(ds map[string]store.Drawer, q []float32, f store.Filter, k int) []store.Scored {
	var out []store.Scored
	for _, d := range ds {
		if len(d.Vector) == 0 || !f.Matches(d) {
			continue
		}
		var s float64
		for i := range q {
			s += float64(q[i]) * float64(d.Vector[i])
		}
		out = append(out, store.Scored{ID: d.ID, Score: s})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// SameRanking fails unless got ranks as want does: the same ids in the same
// order, ranked from 1, each score within 1e-5 of want's.
func SameRanking(t *testing.T, what string, got, want []store.Scored) {
	t.Helper()
	if !slices.Equal(scoredIDs(got), scoredIDs(want)) {
		t.Errorf("%s: ids\n got %v\nwant %v", what, scoredIDs(got), scoredIDs(want))
		return
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-5 || got[i].Rank != i+1 {
			t.Errorf("%s: hit %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func testVectorExact(t *testing.T, s store.Store) {
	ctx := t.Context()
	const dim, n = 37, 600 // an odd dimension exercises kernel tails
	if err := s.SetModel(ctx, "exact", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 42))
	ref := map[string]store.Drawer{}
	wings := []string{"w0", "w1", "w2"}
	for fi := range 3 {
		src := fmt.Sprintf("f%d.md", fi)
		var ins []store.Drawer
		for i := range n / 3 {
			d := drawer(src, i, wings[i%3], "r", "a", "", "h", "t")
			if i%10 != 9 { // every tenth drawer waits for SetVectors
				d.Vector = UnitVector(rng, dim)
			}
			ins = append(ins, d)
			ref[d.ID] = d
		}
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: ins})
	}
	miss, err := s.MissingVectors(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(miss) != n/10 {
		t.Fatalf("MissingVectors = %d drawers, want %d", len(miss), n/10)
	}
	if miss[0].Text != "t" {
		t.Errorf("MissingVectors drawers lack their text: %+v", miss[0])
	}
	// status counts the drawers still to embed as Drawers - Vectors.
	if st, err := s.Stats(ctx); err != nil || st.Drawers-st.Vectors != len(miss) {
		t.Errorf("Stats = %d drawers, %d vectors (%v); want %d without a vector, as MissingVectors lists", st.Drawers, st.Vectors, err, len(miss))
	}
	if few, err := s.MissingVectors(ctx, 5); err != nil || len(few) != 5 {
		t.Errorf("MissingVectors(5) = %d, %v", len(few), err)
	}
	check := func(stage string) {
		for qi := range 5 {
			q := UnitVector(rng, dim)
			for _, tc := range []struct {
				f store.Filter
				k int
			}{{store.Filter{}, 10}, {store.Filter{}, 1}, {store.Filter{Wing: "w1"}, 10}, {store.Filter{}, n + 10}} {
				got, err := s.Vector(ctx, q, tc.f, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				SameRanking(t, fmt.Sprintf("%s query %d %+v k=%d", stage, qi, tc.f, tc.k), got, BruteForce(ref, q, tc.f, tc.k))
			}
		}
	}
	check("before SetVectors")

	var setIDs []string
	var setVecs [][]float32
	for _, d := range miss {
		v := UnitVector(rng, dim)
		setIDs = append(setIDs, d.ID)
		setVecs = append(setVecs, v)
		r := ref[d.ID]
		r.Vector = v
		ref[d.ID] = r
	}
	if err := s.SetVectors(ctx, setIDs, setVecs); err != nil {
		t.Fatalf("SetVectors: %v", err)
	}
	if miss, _ := s.MissingVectors(ctx, 0); len(miss) != 0 {
		t.Errorf("MissingVectors after SetVectors = %d", len(miss))
	}
	check("after SetVectors")

	if err := s.SetVectors(ctx, []string{"no-such-drawer"}, [][]float32{UnitVector(rng, dim)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetVectors(unknown id) = %v, want ErrNotFound", err)
	}
	if err := s.SetVectors(ctx, []string{"a", "b"}, [][]float32{UnitVector(rng, dim)}); err == nil {
		t.Errorf("SetVectors with mismatched lengths succeeded")
	}
	if res, err := s.Vector(ctx, UnitVector(rng, dim), store.Filter{}, 0); err != nil || len(res) != 0 {
		t.Errorf("Vector k=0 = %v, %v", res, err)
	}
}

func testVectorFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	all := grid(t, s, 16, 3)
	ref := map[string]store.Drawer{}
	for _, d := range all {
		ref[d.ID] = d
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, f := range filterCases {
		q := UnitVector(rng, 16)
		got, err := s.Vector(ctx, q, f, 5)
		if err != nil {
			t.Fatalf("Vector(%+v): %v", f, err)
		}
		SameRanking(t, fmt.Sprintf("Vector(%+v)", f), got, BruteForce(ref, q, f, 5))
	}
}

// testVectorsFollowWrites interleaves every kind of write with searches and
// checks each search against a reference model, so a backend that caches
// vectors must keep its cache exactly in step.
func testVectorsFollowWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	const dim = 12
	if err := s.SetModel(ctx, "follow", dim); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	ref := map[string]store.Drawer{}
	sources := []string{"a.md", "b.md", "c.md"}
	wings := []string{"w1", "w2"}
	next := 0
	query := func(step int) {
		// Vectors by id: every id there ever was (and some never), each
		// with its vector while it has one. The copies are scribbled on
		// before the search below, which must not see it.
		var all []string
		for _, src := range append(sources, "never.md") {
			for n := range next + 1 {
				all = append(all, fmt.Sprintf("%s#%d", src, n))
			}
		}
		vecs, err := s.Vectors(ctx, all)
		if err != nil {
			t.Fatalf("step %d: Vectors: %v", step, err)
		}
		want := map[string][]float32{}
		for id, d := range ref {
			if len(d.Vector) > 0 {
				want[id] = d.Vector
			}
		}
		if !maps.EqualFunc(vecs, want, slices.Equal) {
			t.Fatalf("step %d: Vectors: %d vectors, want %d (of %v)", step, len(vecs), len(want), slices.Sorted(maps.Keys(want)))
		}
		for _, v := range vecs {
			v[0] = 42
		}
		q := UnitVector(rng, dim)
		f := []store.Filter{{}, {Wing: "w1"}, {Room: "r1"}, {Since: "2026-01-10"}}[rng.IntN(4)]
		got, err := s.Vector(ctx, q, f, 7)
		if err != nil {
			t.Fatalf("step %d: Vector: %v", step, err)
		}
		SameRanking(t, fmt.Sprintf("step %d %+v", step, f), got, BruteForce(ref, q, f, 7))
	}
	query(-1)
	for step := range 80 {
		src := sources[rng.IntN(len(sources))]
		switch op := rng.IntN(10); {
		case op < 5: // mine: delete some, insert some, update some
			u := store.FileUpdate{File: file(src, "w", "a")}
			for _, id := range slices.Sorted(maps.Keys(ref)) {
				d := ref[id]
				if d.Source != src {
					continue
				}
				switch rng.IntN(4) {
				case 0:
					u.Delete = append(u.Delete, id)
					delete(ref, id)
				case 1:
					d.Wing, d.Room = wings[rng.IntN(2)], fmt.Sprintf("r%d", rng.IntN(2))
					d.Date = fmt.Sprintf("2026-01-%02d", 1+rng.IntN(20))
					u.Update = append(u.Update, d)
					ref[id] = d
				}
			}
			for range rng.IntN(6) {
				d := drawer(src, next, wings[rng.IntN(2)], fmt.Sprintf("r%d", rng.IntN(2)), "a", fmt.Sprintf("2026-01-%02d", 1+rng.IntN(20)), "h", "t")
				next++
				if rng.IntN(3) > 0 {
					d.Vector = UnitVector(rng, dim)
				}
				u.Insert = append(u.Insert, d)
				ref[d.ID] = d
			}
			apply(t, s, u)
		case op < 7: // embed what is missing
			miss, err := s.MissingVectors(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			var setIDs []string
			var vecs [][]float32
			for _, m := range miss {
				v := UnitVector(rng, dim)
				setIDs, vecs = append(setIDs, m.ID), append(vecs, v)
				d := ref[m.ID]
				d.Vector = v
				ref[m.ID] = d
			}
			if err := s.SetVectors(ctx, setIDs, vecs); err != nil {
				t.Fatalf("step %d: SetVectors: %v", step, err)
			}
		case op < 9:
			if err := s.DeleteFile(ctx, src); err != nil {
				t.Fatal(err)
			}
			for id, d := range ref {
				if d.Source == src {
					delete(ref, id)
				}
			}
		default:
			if err := s.ClearVectors(ctx); err != nil {
				t.Fatal(err)
			}
			for id, d := range ref {
				d.Vector = nil
				ref[id] = d
			}
		}
		query(step)
	}
}

func testWrongDimension(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := file("a.md", "w", "a")
	plain := drawer("a.md", 0, "w", "r", "a", "", "h", "t")
	apply(t, s, store.FileUpdate{File: f, Insert: []store.Drawer{plain}})
	if err := s.SetVectors(ctx, []string{plain.ID}, [][]float32{{1, 0, 0}}); err == nil {
		t.Errorf("SetVectors before SetModel succeeded")
	}
	if res, err := s.Vector(ctx, []float32{1, 0, 0}, store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Vector with no model = %v, %v; want nothing", res, err)
	}
	for _, bad := range []struct {
		model string
		dim   int
	}{{"", 3}, {"m", 0}, {"m", -1}} {
		if err := s.SetModel(ctx, bad.model, bad.dim); err == nil {
			t.Errorf("SetModel(%q, %d) succeeded", bad.model, bad.dim)
		}
	}
	if err := s.SetModel(ctx, "m", 3); err != nil {
		t.Fatal(err)
	}
	if m, d, err := s.Model(ctx); err != nil || m != "m" || d != 3 {
		t.Errorf("Model() = %q, %d, %v", m, d, err)
	}
	wrong := drawer("a.md", 1, "w", "r", "a", "", "h", "t")
	wrong.Vector = []float32{1, 0}
	if err := s.Apply(ctx, store.FileUpdate{File: f, Insert: []store.Drawer{wrong}}); err == nil {
		t.Errorf("Apply with a 2-d vector under a 3-d model succeeded")
	}
	nan := drawer("a.md", 2, "w", "r", "a", "", "h", "t")
	nan.Vector = []float32{float32(math.NaN()), 0, 0}
	if err := s.Apply(ctx, store.FileUpdate{File: f, Insert: []store.Drawer{nan}}); err == nil {
		t.Errorf("Apply with a NaN vector succeeded")
	}
	for _, v := range [][]float32{{1, 0, 0, 0}, {1}, {}, {float32(math.Inf(1)), 0, 0}} {
		if err := s.SetVectors(ctx, []string{plain.ID}, [][]float32{v}); err == nil {
			t.Errorf("SetVectors(%v) under a 3-d model succeeded", v)
		}
	}
	if err := s.SetVectors(ctx, []string{plain.ID}, [][]float32{{0, 1, 0}}); err != nil {
		t.Fatalf("SetVectors: %v", err)
	}
	for _, q := range [][]float32{{1, 0}, {1, 0, 0, 0}, nil, {float32(math.NaN()), 0, 0}, {0, float32(math.Inf(-1)), 0}} {
		if _, err := s.Vector(ctx, q, store.Filter{}, 5); err == nil {
			t.Errorf("Vector(%v) under a 3-d model succeeded", q)
		}
	}
	if st, _ := s.Stats(ctx); st.Drawers != 1 || st.Vectors != 1 {
		t.Errorf("Stats after refused vectors = %+v", st)
	}
}

func testModelChange(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m1", 4); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(ctx, "m1", 4); err != nil {
		t.Errorf("SetModel with the same model again: %v", err)
	}
	f := file("a.md", "w", "a")
	d := drawer("a.md", 0, "w", "r", "a", "", "h", "t")
	d.Vector = []float32{0, 0, 1, 0}
	apply(t, s, store.FileUpdate{File: f, Insert: []store.Drawer{d}})
	if err := s.SetModel(ctx, "m2", 6); err == nil {
		t.Errorf("SetModel switched models while vectors of the old one exist")
	}
	if err := s.ClearVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Vector(ctx, []float32{0, 0, 1, 0}, store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Vector after ClearVectors = %v, %v", res, err)
	}
	if err := s.SetModel(ctx, "m2", 6); err != nil {
		t.Fatalf("SetModel after ClearVectors: %v", err)
	}
	miss, err := s.MissingVectors(ctx, 0)
	if err != nil || len(miss) != 1 {
		t.Fatalf("MissingVectors after ClearVectors = %v, %v", ids(miss), err)
	}
	if err := s.SetVectors(ctx, []string{d.ID}, [][]float32{{0, 0, 0, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Vector(ctx, []float32{0, 0, 0, 0, 0, 1}, store.Filter{}, 5)
	if err != nil || len(res) != 1 || math.Abs(res[0].Score-1) > 1e-6 {
		t.Errorf("Vector under the new model = %+v, %v", res, err)
	}
	if st, _ := s.Stats(ctx); st.Model != "m2" || st.Dim != 6 || st.Vectors != 1 {
		t.Errorf("Stats after model change = %+v", st)
	}
}

func testEmbedCache(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m1", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings(ctx, "m1", []string{"h1", "h2"}, [][]float32{{1, 2, 3}, {4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings(ctx, "m2", []string{"h1"}, [][]float32{{7, 8}}); err != nil {
		t.Fatal(err)
	}
	// Overwriting is allowed (same text, same model: same vector in practice).
	if err := s.PutEmbeddings(ctx, "m1", []string{"h2"}, [][]float32{{4, 5, 6.5}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CachedEmbeddings(ctx, "m1", []string{"h1", "h2", "h3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"h1": {1, 2, 3}, "h2": {4, 5, 6.5}}
	if len(got) != len(want) || !slices.Equal(got["h1"], want["h1"]) || !slices.Equal(got["h2"], want["h2"]) {
		t.Errorf("CachedEmbeddings(m1) = %v, want %v", got, want)
	}
	if got, err := s.CachedEmbeddings(ctx, "m2", []string{"h1", "h2"}); err != nil || len(got) != 1 || !slices.Equal(got["h1"], []float32{7, 8}) {
		t.Errorf("CachedEmbeddings(m2) = %v, %v", got, err)
	}
	if got, err := s.CachedEmbeddings(ctx, "m3", []string{"h1"}); err != nil || len(got) != 0 {
		t.Errorf("CachedEmbeddings(m3) = %v, %v", got, err)
	}
	if got, err := s.CachedEmbeddings(ctx, "m1", nil); err != nil || len(got) != 0 {
		t.Errorf("CachedEmbeddings(nil) = %v, %v", got, err)
	}
	bad := []struct {
		name   string
		model  string
		hashes []string
		vecs   [][]float32
	}{
		{"wrong dimension for the recorded model", "m1", []string{"h9"}, [][]float32{{1, 2}}},
		{"length mismatch", "m1", []string{"h9", "h10"}, [][]float32{{1, 2, 3}}},
		{"empty model", "", []string{"h9"}, [][]float32{{1, 2, 3}}},
		{"empty vector", "m1", []string{"h9"}, [][]float32{{}}},
		{"NaN", "m1", []string{"h9"}, [][]float32{{float32(math.NaN()), 0, 0}}},
	}
	for _, b := range bad {
		if err := s.PutEmbeddings(ctx, b.model, b.hashes, b.vecs); err == nil {
			t.Errorf("PutEmbeddings %s succeeded", b.name)
		}
	}
	// Many hashes in one call.
	var hs []string
	var vs [][]float32
	for i := range 1100 {
		hs = append(hs, fmt.Sprintf("bulk%d", i))
		vs = append(vs, []float32{float32(i), 0, 0})
	}
	if err := s.PutEmbeddings(ctx, "m1", hs, vs); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CachedEmbeddings(ctx, "m1", hs); err != nil || len(got) != len(hs) || got["bulk1099"][0] != 1099 {
		t.Errorf("CachedEmbeddings(1100) = %d entries, %v", len(got), err)
	}
}

func testStats(t *testing.T, s store.Store) {
	ctx := t.Context()
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backend == "" || st.Backend != s.Backend() {
		t.Errorf("Stats.Backend = %q, Backend() = %q", st.Backend, s.Backend())
	}
	if st.Files != 0 || st.Drawers != 0 || st.Vectors != 0 || len(st.Wings) != 0 || !st.LastMine.IsZero() || st.Model != "" || st.Dim != 0 {
		t.Errorf("Stats of an empty store = %+v", st)
	}
	if err := s.SetModel(ctx, "m", 2); err != nil {
		t.Fatal(err)
	}
	later := minedAt.Add(48 * time.Hour)
	for i, w := range []string{"zeta", "alpha", "alpha"} {
		src := fmt.Sprintf("f%d.md", i)
		f := file(src, w, "a")
		if i == 1 {
			f.MinedAt = later
		}
		var ds []store.Drawer
		for j := range i + 2 {
			d := drawer(src, j, w, "r", "a", "", "h", "t")
			if j == 0 {
				d.Vector = []float32{1, 0}
			}
			ds = append(ds, d)
		}
		apply(t, s, store.FileUpdate{File: f, Insert: ds})
	}
	st, err = s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(st.Wings, func(a, b int) bool { return st.Wings[a].Wing < st.Wings[b].Wing })
	wantWings := []store.WingStats{{Wing: "alpha", Drawers: 7}, {Wing: "zeta", Drawers: 2}}
	if st.Files != 3 || st.Drawers != 9 || st.Vectors != 3 || !slices.Equal(st.Wings, wantWings) {
		t.Errorf("Stats counts = %+v", st)
	}
	if st.Model != "m" || st.Dim != 2 || !st.LastMine.Equal(later) || st.SizeBytes <= 0 {
		t.Errorf("Stats = %+v, want model m/2, last mine %v, a size", st, later)
	}
}

func testReset(t *testing.T, s store.Store) {
	ctx := t.Context()
	all := grid(t, s, 4, 1)
	if err := s.PutEmbeddings(ctx, "grid-model", []string{"h"}, [][]float32{{1, 0, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	// Search once first so that any cached state has to be dropped.
	if res, _ := s.Vector(ctx, all[0].Vector, store.Filter{}, 3); len(res) != 3 {
		t.Fatalf("Vector before Reset = %v", res)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 0 || st.Drawers != 0 || st.Vectors != 0 || len(st.Wings) != 0 {
		t.Errorf("Stats after Reset = %+v", st)
	}
	if files, _ := s.Files(ctx, ""); len(files) != 0 {
		t.Errorf("files after Reset: %v", files)
	}
	if res, err := s.Lexical(ctx, "common", store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Lexical after Reset = %v, %v", res, err)
	}
	if res, err := s.Vector(ctx, all[0].Vector, store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Vector after Reset = %v, %v", res, err)
	}
	if got, _ := s.CachedEmbeddings(ctx, "grid-model", []string{"h"}); len(got) != 1 {
		t.Errorf("Reset dropped the embedding cache")
	}
	// The palace is usable again.
	again := grid(t, s, 4, 2)
	if res, err := s.Vector(ctx, again[0].Vector, store.Filter{}, 1); err != nil || len(res) != 1 || res[0].ID != again[0].ID {
		t.Errorf("Vector after re-mining = %v, %v", res, err)
	}
	if res, err := s.Lexical(ctx, "common", store.Filter{}, 100); err != nil || len(res) != len(again) {
		t.Errorf("Lexical after re-mining = %d hits, %v", len(res), err)
	}
}

// testConcurrentUse runs writers and readers on one store at once; with
// -race it also checks the backend's own locking.
func testConcurrentUse(t *testing.T, s store.Store) {
	ctx := t.Context()
	const dim, writers, rounds = 8, 3, 15
	if err := s.SetModel(ctx, "m", dim); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			src := fmt.Sprintf("w%d.md", w)
			var prev []string
			for r := range rounds {
				u := store.FileUpdate{File: file(src, "w", "a"), Delete: prev}
				prev = nil
				for i := range 5 {
					d := drawer(src, r*10+i, fmt.Sprintf("wing%d", w), "r", "a", "", "h", fmt.Sprintf("round %d writer %d", r, w))
					d.Vector = UnitVector(rng, dim)
					u.Insert = append(u.Insert, d)
					prev = append(prev, d.ID)
				}
				if err := s.Apply(ctx, u); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for range rounds * 2 {
				if _, err := s.Vector(ctx, UnitVector(rng, dim), store.Filter{}, 5); err != nil {
					errs <- err
					return
				}
				if _, err := s.Lexical(ctx, "round writer", store.Filter{}, 5); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Drawers != writers*5 || st.Vectors != writers*5 {
		t.Errorf("after concurrent writes: %+v, want %d drawers with vectors", st, writers*5)
	}
	res, err := s.Vector(ctx, UnitVector(rand.New(rand.NewPCG(1, 2)), dim), store.Filter{}, 100)
	if err != nil || len(res) != writers*5 {
		t.Errorf("Vector after concurrent writes = %d hits, %v", len(res), err)
	}
}

// testVectorTiesByID: drawers whose vectors score alike rank by id,
// whatever order they were written and deleted in (a delete moves rows
// around in an in-memory index).
func testVectorTiesByID(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m", 3); err != nil {
		t.Fatal(err)
	}
	best := drawer("best.md", 0, "w", "r", "a", "", "h", "best")
	best.Vector = []float32{1, 0, 0}
	apply(t, s, store.FileUpdate{File: file("best.md", "w", "a"), Insert: []store.Drawer{best}})
	var tied []string
	for _, n := range []int{7, 2, 9, 0, 5, 3, 8, 1, 6, 4} {
		src := fmt.Sprintf("tie-%d.md", n)
		d := drawer(src, n, "w", "r", "a", "", "h", fmt.Sprintf("tied %d", n))
		d.Vector = []float32{0.6, 0.8, 0}
		apply(t, s, store.FileUpdate{File: file(src, "w", "a"), Insert: []store.Drawer{d}})
		if n%3 == 0 {
			if err := s.DeleteFile(ctx, src); err != nil {
				t.Fatal(err)
			}
			continue
		}
		tied = append(tied, d.ID)
	}
	slices.Sort(tied)
	want := append([]string{best.ID}, tied...)
	ks := []int{len(want)}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.VectorMode == "exact" {
		// An approximate index (pgvector's HNSW, ordered by distance
		// alone in SQL) decides which of several tied drawers make a cut
		// below them; an exact scan keeps the smaller ids.
		ks = append(ks, 4)
	}
	for _, k := range ks {
		res, err := s.Vector(ctx, []float32{1, 0, 0}, store.Filter{}, k)
		if err != nil {
			t.Fatal(err)
		}
		if got := scoredIDs(res); !slices.Equal(got, want[:k]) {
			t.Errorf("Vector(k=%d) = %v, want best then the ties by id %v", k, got, want[:k])
		}
	}
}

// testLockSource: a source lock is released by its unlock, and locks on
// two sources are independent. Only a shared palace's lock holds anything
// off; every backend's can be taken and given back.
func testLockSource(t *testing.T, s store.Store) {
	ctx := t.Context()
	for range 2 { // the second round finds the first round's locks released
		a, err := s.LockSource(ctx, "a.md")
		if err != nil {
			t.Fatalf("LockSource(a.md): %v", err)
		}
		b, err := s.LockSource(ctx, "b.md")
		if err != nil {
			t.Fatalf("LockSource(b.md) while a.md is held: %v", err)
		}
		b()
		a()
	}
}

// testScrub: Scrub drops the cached vectors of the hashes it is given,
// under every model, keeps the rest and every drawer, and leaves the
// index usable (the full-text index answers for what is left, and not
// for what was deleted).
func testScrub(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.SetModel(ctx, "m1", 3); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m1", "m2"} {
		if err := s.PutEmbeddings(ctx, m, []string{"gone", "kept"}, [][]float32{{1, 2, 3}, {4, 5, 6}}); err != nil {
			t.Fatal(err)
		}
	}
	keep := drawer("k.md", 0, "w", "recent", "a", "", "kept", "walnut orchard")
	gone := drawer("g.md", 0, "w", "recent", "a", "", "secret", "zanzibar passphrase")
	apply(t, s, store.FileUpdate{File: file("k.md", "w", "a"), Insert: []store.Drawer{keep}})
	apply(t, s, store.FileUpdate{File: file("g.md", "w", "a"), Insert: []store.Drawer{gone}})
	if err := s.DeleteFile(ctx, "g.md"); err != nil {
		t.Fatal(err)
	}
	if err := s.Scrub(ctx, []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m1", "m2"} {
		got, err := s.CachedEmbeddings(ctx, m, []string{"gone", "kept"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got["gone"]; ok || len(got["kept"]) != 3 {
			t.Errorf("after Scrub, cache of %s = %v: want only kept", m, got)
		}
	}
	if res, err := s.Lexical(ctx, "walnut", store.Filter{}, 5); err != nil || len(res) != 1 {
		t.Errorf("Lexical(walnut) after Scrub = %v, %v", res, err)
	}
	if res, err := s.Lexical(ctx, "zanzibar", store.Filter{}, 5); err != nil || len(res) != 0 {
		t.Errorf("Lexical(zanzibar) after Scrub = %v, %v", res, err)
	}
	if err := s.Scrub(ctx, nil); err != nil {
		t.Errorf("Scrub(nil): %v", err)
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check after Scrub: %v", err)
	}
}
