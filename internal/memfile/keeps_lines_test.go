package memfile

// The editing functions on adversarial files must keep every
// existing line (in order) and add exactly what they say.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// oddCorpus is a set of awkward memory files.
func oddCorpus() map[string]string {
	sec := func(i int) string { return fmt.Sprintf("## 2026-01-%02d — s%d\nline %d\n", i%28+1, i, i) }
	secs := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(sec(i))
		}
		return b.String()
	}
	title := "# Memory — a (a)\n\n"
	return map[string]string{
		"empty":              "",
		"bom-only":           "\uFEFF",
		"cr-only":            "\r",
		"title-no-newline":   "# Memory",
		"template":           string(Template("a", "A")),
		"plain":              title + secs(5),
		"crlf":               strings.ReplaceAll(title+secs(5), "\n", "\r\n"),
		"lone-cr-end":        title + secs(3) + "last\r",
		"bom-heading":        "\uFEFF" + secs(3),
		"open-fence-end":     title + secs(3) + "```\n## swallowed\n",
		"open-fence-header":  "# T\n~~~~\n## not a heading\n",
		"pinned-at-end":      title + secs(3) + HeadingPinned + "\n- x",
		"pinned-open-fence":  title + HeadingPinned + "\n- x\n```\n## y\n",
		"two-pinned":         title + HeadingPinned + "\n- x\n" + secs(2) + HeadingPinned + "\n- y\n",
		"pinned-placeholder": title + HeadingPinned + "\n" + Placeholder + "\r\n- after\n" + secs(1),
		"pinned-no-body":     title + HeadingPinned,
		"pinned-blank-lines": title + HeadingPinned + "\n\n\n- x\n\n\n" + secs(1),
		"regions-reversed":   title + HeadingRecent + "\nbody\n" + HeadingCondensed + "\n- c\n" + HeadingPinned + "\n- p\n" + secs(2),
		"heading-variants":   title + "##\n##\tx\n ## y\n## \n" + secs(2),
		"long-line":          title + "## s\n" + strings.Repeat("word ", 20000) + "\n",
		"pin-lines":          title + secs(2) + "📌 inline pin\n- 📌 bullet pin\n",
	}
}

// linesOf splits s into lines without endings ("\n" only; a "\r" before it
// is dropped, a lone "\r" is kept).
func linesOf(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	out := strings.Split(s, "\n")
	for i, l := range out {
		// A BOM belongs to the file, not to its first line: an edit that
		// inserts before line 1 keeps it in front.
		out[i] = strings.TrimPrefix(strings.TrimSuffix(l, "\r"), bom)
	}
	return out
}

// keepsLines reports whether every line of old appears in new in order,
// ignoring lines for which skip is true, and allowing a line to be
// continued (the old last line without a newline may gain a "\r").
func keepsLines(old, new string, skip func(string) bool) (string, bool) {
	nl := linesOf(new)
	j := 0
	for _, l := range linesOf(old) {
		if l == "" && strings.TrimPrefix(old, bom) == "" {
			continue // a file that is only a BOM has no line to keep
		}
		if skip != nil && skip(l) {
			continue
		}
		for j < len(nl) && nl[j] != l && strings.TrimSuffix(nl[j], "\r") != strings.TrimSuffix(l, "\r") {
			j++
		}
		if j == len(nl) {
			return l, false
		}
		j++
	}
	return "", true
}

// TestAppendSectionKeepsEveryLine: appending to any corpus file keeps
// the old bytes as a prefix, every old line in order, and parses to the old
// sections plus one.
func TestAppendSectionKeepsEveryLine(t *testing.T) {
	bodies := []string{"", "x", "## h\n```\n", "a\r\nb\rc", "\uFEFF## bom", strings.Repeat("z", 70000), "📌 pin\n"}
	for name, old := range oddCorpus() {
		for bi, body := range bodies {
			got, err := AppendSection([]byte(old), "2026-02-02 — new", body)
			if err != nil {
				t.Errorf("%s/%d: %v", name, bi, err)
				continue
			}
			if !strings.HasPrefix(string(got), old) {
				t.Errorf("%s/%d: old bytes not kept as a prefix", name, bi)
			}
			if l, ok := keepsLines(old, string(got), nil); !ok {
				t.Errorf("%s/%d: line %q lost", name, bi, l)
			}
			of, _ := Parse([]byte(old))
			nf, err := Parse(got)
			if err != nil {
				t.Fatalf("%s/%d: %v", name, bi, err)
			}
			if len(nf.Sections) != len(of.Sections)+1 {
				t.Errorf("%s/%d: %d sections, want %d", name, bi, len(nf.Sections), len(of.Sections)+1)
			}
			if len(of.Pinned()) > len(nf.Pinned()) {
				t.Errorf("%s/%d: pinned facts %q -> %q", name, bi, of.Pinned(), nf.Pinned())
			}
		}
	}
}

// TestAddPinnedKeepsEveryLine: pinning into any corpus file keeps every
// old line in order (a placeholder line may be replaced), every section's
// kind, and adds the fact exactly once, even when pinned repeatedly in
// different spellings.
func TestAddPinnedKeepsEveryLine(t *testing.T) {
	for name, old := range oddCorpus() {
		data := []byte(old)
		for i, fact := range []string{"new fact", "- new fact", "📌 new fact", "  new   fact  ", "second fact"} {
			got, ok, err := AddPinned(data, fact)
			if err != nil {
				t.Errorf("%s/%d: %v", name, i, err)
				break
			}
			if want := i == 0 || i == 4; ok != want {
				t.Errorf("%s/%d: added = %v, want %v", name, i, ok, want)
			}
			if l, keep := keepsLines(string(data), string(got), isPlaceholderLine); !keep {
				t.Errorf("%s/%d: line %q lost:\n%q\n->\n%q", name, i, l, data, got)
			}
			of, _ := Parse(data)
			nf, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if len(nf.Recent()) != len(of.Recent()) {
				t.Errorf("%s/%d: ordinary sections %d -> %d", name, i, len(of.Recent()), len(nf.Recent()))
			}
			data = got
		}
		nf, _ := Parse(data)
		n := 0
		for _, p := range nf.Pinned() {
			if NormalizeFact(p) == "new fact" {
				n++
			}
		}
		if n != 1 || strings.Count(string(data), "new fact") != 1 {
			t.Errorf("%s: \"new fact\" pinned %d times, %d in the text", name, n, strings.Count(string(data), "new fact"))
		}
	}
}

// TestBuildRandomRebuildsKeepStructure: random slices of random corpus files,
// rebuilt with random condensed text and facts (including structure-
// breaking ones), always parse into exactly one of each region, keep the
// header and every kept section byte for byte, and keep every fact.
func TestBuildRandomRebuildsKeepStructure(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	corpus := oddCorpus()
	names := make([]string, 0, len(corpus))
	for n := range corpus {
		names = append(names, n)
	}
	nasty := []string{"## Recent", "## 📌 Durable facts", "```", "~~~~", "\uFEFF## x", "a\r\nb", "line\rcr", "_(none yet)_", "📌 pinned", "\\## esc", "\x00nul", "\xffbad"}
	pick := func() string { return nasty[rng.IntN(len(nasty))] }
	for range 3000 {
		name := names[rng.IntN(len(names))]
		f, err := Parse([]byte(corpus[name]))
		if err != nil {
			t.Fatal(err)
		}
		ord := f.Recent()
		keep := ord[rng.IntN(len(ord)+1):]
		var condensed strings.Builder
		for range rng.IntN(5) {
			condensed.WriteString(pick() + "\n")
		}
		facts := []string{"fact " + pick(), pick()}
		out := Build(f.Header, append(f.Pinned(), facts...), condensed.String(), f.RecentBody(), keep)
		nf, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: rebuilt file does not parse: %v", name, err)
		}
		kinds := map[Kind]int{}
		for _, s := range nf.Sections {
			kinds[s.Kind]++
		}
		if kinds[KindPinned] != 1 || kinds[KindCondensed] != 1 || kinds[KindRecent] != 1 {
			t.Fatalf("%s: regions %v in\n%q", name, kinds, out)
		}
		if !strings.HasPrefix(string(out), f.Header) && !strings.HasPrefix(string(out), f.Header+"\n") && !strings.HasPrefix(string(out), f.Header+"\r\n") {
			t.Fatalf("%s: header %q not kept", name, f.Header)
		}
		got := nf.Recent()
		if len(got) != len(keep) {
			t.Fatalf("%s: %d kept sections, want %d\n%q", name, len(got), len(keep), out)
		}
		for i, s := range keep {
			if i < len(keep)-1 && got[i].Raw != s.Raw {
				t.Fatalf("%s: kept section %d changed: %q -> %q", name, i, s.Raw, got[i].Raw)
			}
			if i == len(keep)-1 && !strings.HasPrefix(got[i].Raw, s.Raw) {
				t.Fatalf("%s: last kept section changed: %q -> %q", name, s.Raw, got[i].Raw)
			}
		}
		have := map[string]bool{}
		for _, p := range nf.Pinned() {
			have[NormalizeFact(p)] = true
		}
		for _, p := range f.Pinned() {
			if !have[NormalizeFact(p)] {
				t.Fatalf("%s: fact %q lost", name, p)
			}
		}
	}
}
