package dedup

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hivemem/hivemem/internal/minilm"
	"github.com/hivemem/hivemem/internal/modelfetch"
)

type pair struct {
	repeat     bool
	kind, a, b string
}

func readPairs(t testing.TB) []pair {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 4 || (c[0] != "dup" && c[0] != "new") {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, pair{c[0] == "dup", c[1], c[2], c[3]})
	}
	return out
}

var (
	modelOnce sync.Once
	model     *minilm.Model
	modelErr  error
)

// requireModel loads MiniLM once, or skips without it (except in CI).
func requireModel(t testing.TB) *minilm.Model {
	t.Helper()
	dir := modelfetch.DefaultDir()
	for _, f := range modelfetch.RequiredFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("model not installed in %s: CI must run `hivemem model fetch`", dir)
			}
			t.Skipf("model not installed in %s: run `hivemem model fetch`", dir)
		}
	}
	modelOnce.Do(func() { model, modelErr = minilm.Load(dir) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return model
}

// TestThresholdOnPairs holds the rules and CosineMin to the measured
// pairs: every repeat is found and no changed, related or unrelated note
// is taken for one. With -v it prints each pair's cosine and verdict, and
// the cosine range per kind (the figures in the README).
func TestThresholdOnPairs(t *testing.T) {
	m := requireModel(t)
	pairs := readPairs(t)
	var texts []string
	for _, p := range pairs {
		texts = append(texts, p.a, p.b)
	}
	vecs, err := m.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ lo, hi float64 }
	kinds := map[string]*span{}
	var found, repeats, falseRepeats int
	lowRepeat, highNew := 2.0, -2.0 // among pairs the cosine decided
	for i, p := range pairs {
		cos := Cosine(vecs[2*i], vecs[2*i+1])
		v := Compare(p.a, p.b, cos)
		t.Logf("%-5v %-12s cos=%.3f %-5v (%s): %q / %q", p.repeat, p.kind, cos, v.Repeat, v.Why, p.a, p.b)
		s := kinds[p.kind]
		if s == nil {
			s = &span{1, -1}
			kinds[p.kind] = s
		}
		s.lo, s.hi = math.Min(s.lo, cos), math.Max(s.hi, cos)
		if v.Why == "paraphrase" || v.Why == "cosine below threshold" {
			if p.repeat {
				lowRepeat = math.Min(lowRepeat, cos)
			} else {
				highNew = math.Max(highNew, cos)
			}
		}
		if p.repeat {
			repeats++
			if v.Repeat {
				found++
			}
		} else if v.Repeat {
			falseRepeats++
			t.Errorf("%s pair taken for a repeat (%s, cosine %.3f): %q / %q", p.kind, v.Why, cos, p.a, p.b)
		}
	}
	var names []string
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("%-12s cosine %.3f–%.3f", k, kinds[k].lo, kinds[k].hi)
	}
	t.Logf("repeats found: %d of %d; new notes taken for repeats: %d of %d", found, repeats, falseRepeats, len(pairs)-repeats)
	t.Logf("decided by the cosine: lowest repeat %.3f, highest new note %.3f; CosineMin %.2f", lowRepeat, highNew, CosineMin)
	if found < repeats*8/10 {
		t.Errorf("only %d of %d repeats found", found, repeats)
	}
}

func TestCompareWithoutVectors(t *testing.T) {
	tests := []struct {
		have, note string
		repeat     bool
		why        string
	}{
		{"Deploy with `make deploy`.", "deploy with `make deploy`", true, "identical"},
		{"- 📌 db is PostgreSQL 15", "db is PostgreSQL 15", true, "identical"},
		{"Alice owns billing; ask her.", "Alice owns billing, so ask her!", true, "same words"},
		{"Never run migrations on Fridays.", "Never run migrations on a Friday.", true, "same words"},
		{"db is PostgreSQL 15", "db is PostgreSQL 16", false, "values differ"},
		{"Use pnpm in the frontend.", "Use yarn in the frontend.", false, "a word swapped"},
		{"Use pnpm in the frontend directory.", "In the frontend folder, use pnpm.", false, "words differ"},
		{"Never run migrations on Fridays.", "Never run migrations on Mondays.", false, "values differ"},
		{"Call Alice about invoices.", "Call Bob about invoices.", false, "values differ"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			v := Compare(tt.have, tt.note, math.NaN())
			if v.Repeat != tt.repeat || v.Why != tt.why || v.Cosine != -1 {
				t.Errorf("Compare(%q, %q) = %+v, want repeat %v (%s)", tt.have, tt.note, v, tt.repeat, tt.why)
			}
		})
	}
}

func TestValues(t *testing.T) {
	tests := []struct{ text, want string }{
		{"The staging database runs PostgreSQL 15 on db-stage-2.", "15 db-stage-2 postgresql"},
		{"Deploy with `make deploy` now.", "deploy make"},
		{"Mail jan@papir.cz at 02:00.", "02:00 jan@papir.cz"},
		{"Alice owns it. Bob too.", ""},
		{"Ask Alice before two o'clock.", "alice two"},
	}
	for _, tt := range tests {
		var got []string
		for k := range Values(tt.text) {
			got = append(got, k)
		}
		sort.Strings(got)
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("Values(%q) = %q, want %q", tt.text, g, tt.want)
		}
	}
}

func ExampleCompare() {
	fmt.Println(Compare("db is PostgreSQL 15", "DB is PostgreSQL 15.", math.NaN()).Why)
	fmt.Println(Compare("db is PostgreSQL 15", "db is PostgreSQL 16", math.NaN()).Why)
	// Output:
	// identical
	// values differ
}

// Find embeds only the candidates a cosine could decide, and reports the
// one a paraphrase repeats.
func TestFindEmbedsOnlyWhatTheCosineDecides(t *testing.T) {
	m := requireModel(t)
	var embedded []string
	vectors := func(ctx context.Context, texts []string) ([][]float32, error) {
		embedded = append(embedded, texts...)
		return m.Embed(ctx, texts)
	}
	cands := []Candidate{
		{"a", "The staging database runs PostgreSQL 16 on db-stage-2."},
		{"b", "Backups of the main database run nightly at 02:00 UTC."},
		{"c", "Lunch orders go to the shared spreadsheet."},
	}
	got, ok, err := Find(t.Context(), vectors, "The main DB is backed up every night at 02:00 UTC.", cands)
	if err != nil || !ok || got.Ref != "b" || got.Why != "paraphrase" {
		t.Fatalf("Find = %+v, %v, %v; want b as a paraphrase", got, ok, err)
	}
	if strings.Join(embedded, "|") != "The main DB is backed up every night at 02:00 UTC.|"+cands[1].Text {
		t.Errorf("embedded %q: want only the note and candidate b", embedded)
	}
	// Without vectors only the exact rules apply.
	if _, ok, _ := Find(t.Context(), nil, "The main DB is backed up every night at 02:00 UTC.", cands); ok {
		t.Error("lexical-only Find took a paraphrase for a repeat")
	}
	if got, ok, _ := Find(t.Context(), nil, "lunch orders go to the shared spreadsheet", cands); !ok || got.Ref != "c" {
		t.Errorf("lexical-only Find of an identical note = %+v, %v", got, ok)
	}
	if _, ok, _ := Find(t.Context(), vectors, "The staging database runs PostgreSQL 17 on db-stage-2.", cands); ok {
		t.Error("a changed version was taken for a repeat")
	}
}
