package summarize

// Summariser output is written into an agent's only copy of
// its memory, so it must never break the file's structure, never panic on
// odd input, and stay within its budget.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/mdfence"
	"github.com/hivemem/hivemem/internal/memfile"
)

// rebuildParses writes res into a condensed file after two kept sections and
// checks the structure survived: one region of each kind, the kept
// sections byte for byte.
func rebuildParses(t *testing.T, name string, res Result) {
	t.Helper()
	kept := "## 2026-03-01 — kept a\nKEPT-A\n## 2026-03-02 — kept b\nKEPT-B\n"
	kf, err := memfile.Parse([]byte(kept))
	if err != nil {
		t.Fatal(err)
	}
	out := memfile.Build("# Memory — a (a)\n\n", res.Hoist, res.Condensed, "", kf.Recent())
	nf, err := memfile.Parse(out)
	if err != nil {
		t.Fatalf("%s: rebuilt file does not parse: %v", name, err)
	}
	kinds := map[memfile.Kind]int{}
	for _, s := range nf.Sections {
		kinds[s.Kind]++
	}
	if kinds[memfile.KindPinned] != 1 || kinds[memfile.KindCondensed] != 1 || kinds[memfile.KindRecent] != 1 {
		t.Errorf("%s: regions %v:\n%s", name, kinds, out)
	}
	got := nf.Recent()
	if len(got) != 2 || got[0].Raw != kf.Recent()[0].Raw || got[1].Raw != kf.Recent()[1].Raw {
		t.Errorf("%s: kept sections changed:\n%s", name, out)
	}
}

// TestParseAdversarialReplies: replies an LLM might give that try to
// smuggle structure into the file are either refused or, once accepted and
// built into a file, cannot add or remove a region or a section.
func TestParseAdversarialReplies(t *testing.T) {
	condensed := map[string]string{
		"recent":         "- a\n## Recent\n## 2026-01-01 — fake section\n",
		"h1":             "# Title\n- a",
		"regions":        "## 📌 Durable facts (pinned — never condensed)\n- x\n## 🗜 Condensed history\n",
		"open-backtick":  "- a\n```\n## Recent\n",
		"open-tilde":     "- a\n~~~~\n## x",
		"indented":       "   ## three spaces\n    ## four spaces",
		"lone-cr":        "- a\r## Recent\r## 2026-01-01 — fake",
		"crlf":           "- a\r\n## Recent\r\n",
		"bom":            "\uFEFF## Recent",
		"fence-in-fence": "````\n```\n## x\n```\n",
		"inline-code":    "- a\n```go`x\n## Recent\n## 2026-01-01 — fake section\n",
		"tab-fence":      "- a\n\t```\n## Recent\n",
		"tilde-info":     "- a\n~~~ go`x\n## x\n~~~\n",
		"placeholder":    "_(none yet)_",
		"only-hashes":    "##\n#\n## ",
		"nul":            "a\x00## Recent",
	}
	hoists := [][]string{
		nil,
		{"## Recent"},
		{"fact\n## Recent", "```", "📌 pinned", "_(none yet)_", "- - -"},
		{"a\rb", "\uFEFF## x"},
	}
	for name, c := range condensed {
		for hi, hoist := range hoists {
			obj := map[string]any{"condensed": c, "hoist": hoist}
			if hoist == nil {
				obj["hoist"] = []string{}
			}
			reply := mustJSON(t, obj)
			res, err := Parse(reply)
			if err != nil {
				continue // refused: fine
			}
			rebuildParses(t, fmt.Sprintf("%s/%d", name, hi), res)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExtractiveAdversarial: the extractive summariser on odd evicted
// sections never panics, always returns non-empty condensed text (or a
// summarize error), hoists every 📌 line outside code, and its output
// cannot break the rebuilt file.
func TestExtractiveAdversarial(t *testing.T) {
	reqs := map[string]Request{
		"only-headings":   {Evicted: []string{"## a\n", "## b\n", "## c\n"}},
		"empty-headings":  {Evicted: []string{"## \n", "## \n"}, OldCondensed: "- old"},
		"crlf":            {Evicted: []string{"## 2026-01-01 — x\r\nuses `go test` in /src/app.go\r\n📌 crlf pin\r\n"}},
		"lone-cr":         {Evicted: []string{"## x\rbody\r📌 pin after cr\n"}},
		"fences":          {Evicted: []string{"## f\n```\n📌 pin in code\n$ make test\n## not heading\n", "## g\n~~~\nunclosed"}},
		"pins":            {Evicted: []string{"## p\n📌 one\n- 📌 two\n  - 📌 three\n> 📌 quoted\n"}, Pinned: []string{"one"}},
		"zero-budget":     {Evicted: []string{"## z\ndecided to always use Go 1.26 in /cmd/x.go\n"}, WordBudget: -5},
		"tiny-budget":     {Evicted: []string{"## " + strings.Repeat("w ", 100) + "\nx\n"}, WordBudget: 1},
		"old-only":        {OldCondensed: "- history one\n  - detail\n```\ncode\n"},
		"old-open-fence":  {OldCondensed: "```\n## Recent\n", Evicted: []string{"## e\nline 2026\n"}},
		"unicode":         {Evicted: []string{"## 🚀 ünïcödé\nשלום 2026 e\u0301 /path/ü.go\n"}},
		"heading-in-body": {Evicted: []string{"## h\n## Recent\n# h1\n"}},
		"many-sections": {Evicted: func() []string {
			var s []string
			for i := range 2000 {
				s = append(s, fmt.Sprintf("## 2026-01-01 — s%d\nfixed bug %d in /src/f%d.go\n", i, i, i))
			}
			return s
		}()},
	}
	for name, req := range reqs {
		res, err := Extractive{}.Summarize(context.Background(), req)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if strings.TrimSpace(res.Condensed) == "" {
			t.Errorf("%s: empty condensed text", name)
		}
		if n := len(strings.Fields(res.Condensed)); n > 2*max(req.budget(), 1)+50 {
			t.Errorf("%s: %d words for a budget of %d", name, n, req.budget())
		}
		rebuildParses(t, name, res)
		// Every 📌 line outside a fence is hoisted or already pinned.
		have := map[string]bool{}
		for _, p := range append(append([]string{}, req.Pinned...), res.Hoist...) {
			have[normFact(p)] = true
		}
		for _, raw := range req.Evicted {
			var fs mdfence.State
			for _, l := range strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n") {
				if fs.Step(l) {
					continue
				}
				text := cleanLine(l)
				if fs.Open() || !strings.HasPrefix(text, "📌") {
					continue
				}
				if !have[normFact(strings.TrimPrefix(text, "📌"))] {
					t.Errorf("%s: pin line %q neither hoisted nor pinned (hoist %q)", name, l, res.Hoist)
				}
			}
		}
	}
}

// TestExtractiveOutputBoundedInBytes: the word budget counts a
// whitespace-free run as one word, so one huge token (a base64 blob, a
// minified path, a long URL) is copied whole into the condensed history:
// a 600-word budget yields hundreds of kilobytes, and a file whose old
// sections hold such a line can never shrink (see the reflector's
// TestHugeSingleTokenLineBounded).
func TestExtractiveOutputBoundedInBytes(t *testing.T) {
	blob := "https://example.com/" + strings.Repeat("QUJDRA", 40_000)
	req := Request{Evicted: []string{"## 2026-01-01 — paste\nsee " + blob + "\n", "## 2026-01-02 — other\nfixed the build in /src/a.go\n"}}
	res, err := Extractive{}.Summarize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// 600 words of even very long words (40 bytes) is 24 KB.
	if limit := req.budget() * 40; len(res.Condensed) > limit {
		t.Fatalf("condensed text is %d bytes for a %d-word budget (limit used here %d): one huge token is copied whole", len(res.Condensed), req.budget(), limit)
	}
}
