package reflector

// Adversarial checks that condensation and restore never lose a
// line an agent wrote, whatever the file holds, whoever writes meanwhile,
// and wherever the process dies.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/summarize"
)

// ---------------------------------------------------------------------------
// helpers

// adversarialSec is ordinary section i with a unique marker line and body.
func adversarialSec(i int, body string) string {
	return fmt.Sprintf("## 2026-01-%02d — s%d\nADV-MARK-%03d\n%s", i%28+1, i, i, body)
}

// adversarialSections renders n sections with bodies from body(i).
func adversarialSections(n int, body func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(adversarialSec(i, body(i)))
	}
	return b.String()
}

// words is deterministic multi-word prose of about n bytes on one line.
func words(seed, n int) string {
	return strings.ReplaceAll(strings.TrimSpace(filler(seed, n)), "\n", " ")
}

// allBackups concatenates every backup of agent.
func (e *env) allBackups(agent string) string {
	e.t.Helper()
	var b strings.Builder
	for _, bk := range e.backups(agent) {
		data, err := os.ReadFile(bk.Path)
		must(e.t, err)
		b.Write(data)
	}
	return b.String()
}

// checkNothingLost checks the no-loss invariant of one condensation of
// orig: if the file changed it must parse, keep the header and Recent
// bodies, hold every ordinary section verbatim either in the file or in the
// archive, and keep every pinned fact; if it did not condense, the file must
// be exactly orig.
func checkNothingLost(t *testing.T, orig, now []byte, arch string, res Result) {
	t.Helper()
	if res.Status != StatusCondensed {
		if !bytes.Equal(now, orig) {
			t.Fatalf("status %s (%s: %s) but the file changed", res.Status, res.Reason, res.Message)
		}
		return
	}
	of := mustParse(t, orig)
	nf, err := memfile.Parse(now)
	if err != nil {
		t.Fatalf("condensed file does not parse: %v", err)
	}
	if nf.Header != of.Header {
		t.Errorf("header changed: %q -> %q", of.Header, nf.Header)
	}
	kinds := map[memfile.Kind]int{}
	for _, s := range nf.Sections {
		kinds[s.Kind]++
	}
	for _, k := range []memfile.Kind{memfile.KindPinned, memfile.KindCondensed, memfile.KindRecent} {
		if kinds[k] != 1 {
			t.Errorf("%d %s regions in the result", kinds[k], k)
		}
	}
	lost := 0
	for _, s := range of.Sections {
		switch s.Kind {
		case memfile.KindSection:
			if !bytes.Contains(now, []byte(s.Raw)) && !strings.Contains(arch, s.Raw) {
				lost++
				if lost <= 3 {
					t.Errorf("section %q (lines %d-%d) is neither in the file nor in the archive", s.Heading, s.StartLine, s.EndLine)
				}
			}
		case memfile.KindRecent:
			if !bytes.Contains(now, []byte(s.Body())) {
				t.Errorf("text under %q lost: %q", s.Heading, s.Body())
			}
		}
	}
	have := map[string]bool{}
	for _, f := range nf.Pinned() {
		have[memfile.NormalizeFact(f)] = true
	}
	for _, f := range of.Pinned() {
		if !have[memfile.NormalizeFact(f)] {
			t.Errorf("pinned fact %q lost", f)
		}
	}
	if lost > 0 {
		t.Errorf("%d sections lost", lost)
	}
}

// ---------------------------------------------------------------------------
// adversarial markdown

// adversarialFiles are memory files built to confuse the parser, the
// rebuild and the summariser.
func adversarialFiles() map[string]string {
	title := "# Memory — alice (alice)\n\n"
	prose := func(i int) string { return words(i, 600) + "\n" }
	base := title + adversarialSections(20, prose)
	regions := memfile.HeadingPinned + "\n- fact one\n- fact two\n" + memfile.HeadingCondensed + "\n- old history line\n" + memfile.HeadingRecent + "\n"
	files := map[string]string{
		"fences": title + adversarialSections(20, func(i int) string {
			switch i % 4 {
			case 0:
				return "```go\n## not a heading " + fmt.Sprint(i) + "\n~~~\n```\n" + prose(i)
			case 1:
				return "~~~~\n## fake heading\n```\n~~~~\n" + prose(i)
			case 2:
				return "````\n```\n## inner\n```\n````\n" + prose(i)
			default:
				return "   ```\n## three-space fence\n   ```\n    ```\n## indented code is not a fence\n" + prose(i)
			}
		}),
		"crlf":             strings.ReplaceAll(base, "\n", "\r\n"),
		"crlf-mixed":       title + strings.ReplaceAll(adversarialSections(10, prose), "\n", "\r\n") + adversarialSections(10, prose),
		"lone-cr":          title + adversarialSections(20, func(i int) string { return "part one\rpart two\r## not a heading after CR\n" + prose(i) }),
		"bom":              "\uFEFF" + base,
		"bom-no-header":    "\uFEFF" + adversarialSections(20, prose),
		"no-header":        adversarialSections(20, prose),
		"no-final-newline": strings.TrimRight(base, "\n"),
		"all-pinned": title + memfile.HeadingPinned + "\n" + func() string {
			var b strings.Builder
			for i := range 400 {
				fmt.Fprintf(&b, "- durable fact number %d about %s\n", i, words(i, 40))
			}
			return b.String()
		}() + memfile.HeadingCondensed + "\n" + memfile.Placeholder + "\n" + memfile.HeadingRecent + "\n" + adversarialSections(16, func(i int) string { return "tiny\n" }),
		"huge-section":   title + adversarialSections(16, func(i int) string { return prose(i) + strings.Repeat(prose(i), 500*btoi(i == 2)) }),
		"dup-headings":   title + strings.Repeat("## same\nsame body\n", 20) + adversarialSections(6, prose),
		"dup-regions":    title + regions + adversarialSections(8, prose) + memfile.HeadingPinned + "\n- fact three\n" + memfile.HeadingCondensed + "\n- newer history\n" + memfile.HeadingRecent + "\nrecent body text\n" + adversarialSections(12, prose),
		"regions-at-end": base + regions,
		"long-lines":     title + adversarialSections(16, func(i int) string { return words(i, 50_000) + "\n" }),
		"pins-in-evicted": title + adversarialSections(20, func(i int) string {
			return fmt.Sprintf("📌 pinned fact %d\n- 📌 bulleted pin %d\n  📌 indented pin %d\n* 📌 star pin %d\n```\n📌 pin inside a fence %d\n```\n", i, i, i, i, i) + prose(i)
		}),
		"unclosed-fence-last": base + "## 2026-02-01 — last\n```\nnever closed\n## swallowed heading\n",
		"heading-variants": title + adversarialSections(20, func(i int) string {
			return "##\n##\tnot a heading\n ## indented\n### sub\n#### subsub\n" + prose(i)
		}) + "## \n##  two spaces\n",
		"unicode": title + adversarialSections(20, func(i int) string {
			return "emoji 🚀 RTL שלום combining e\u0301 sep\u2028line nbsp\u00a0x zwj 👩\u200d💻 ﷽\n" + prose(i)
		}),
		"recent-body":      title + regions + "text directly under Recent\n- and a list\n" + adversarialSections(20, prose),
		"empty-sections":   title + strings.Repeat("## e\n", 30) + adversarialSections(5, prose),
		"many-sections":    title + adversarialSections(600, func(i int) string { return "x\n" }),
		"region-variants":  title + "## 📌️ Durable facts (pinned)\n- variant fact\n## 🗜 Condensed history (old)\n- variant history\n## recent\n" + adversarialSections(20, prose),
		"lowercase-recent": title + adversarialSections(10, prose) + "## recent\nbody of a lowercase recent\n" + adversarialSections(10, prose),
		"tabs-trailing":    title + adversarialSections(20, func(i int) string { return "\tindented with tab   \n  trailing spaces   \n\n\n" + prose(i) }),
		"pin-in-condensed": title + memfile.HeadingPinned + "\n" + memfile.Placeholder + "\n" + memfile.HeadingCondensed + "\n📌 a pin in the condensed text\n- history\n" + memfile.HeadingRecent + "\n" + adversarialSections(20, prose),
		"header-fence":     "# Memory\n```\n## inside a fence in the header\n```\n\n" + adversarialSections(20, prose),
		"backslash-heads":  title + adversarialSections(20, func(i int) string { return "\\## already escaped\n\\\\## double\n" + prose(i) }),
	}
	return files
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAdversarialFilesNeverLoseALine condenses every adversarial file
// with a trivial summariser and with the built-in extractive one: no
// panic, and either the file is untouched or nothing in it was lost.
func TestAdversarialFilesNeverLoseALine(t *testing.T) {
	sums := map[string]func() summarize.Summarizer{
		"fake":       func() summarize.Summarizer { return &fakeSum{} },
		"extractive": func() summarize.Summarizer { return summarize.Extractive{} },
	}
	for name, data := range adversarialFiles() {
		for sname, mk := range sums {
			t.Run(name+"/"+sname, func(t *testing.T) {
				e := newEnv(t, mk())
				e.cfg.Reflector.RecentKeep = 4
				e.write("alice", []byte(data))
				res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
				var ae *AbortError
				if err != nil && !errors.As(err, &ae) {
					t.Fatalf("Condense: %v", err)
				}
				if res.Status == StatusAborted && (ae == nil || ae.Reason == "" || ae.Message == "") {
					t.Errorf("abort without a reason: %+v", res)
				}
				checkNothingLost(t, []byte(data), e.read("alice"), e.archiveText("alice"), res)
				if res.Status == StatusCondensed {
					// A second condensation of the result must keep it
					// whole too (the rebuilt file is valid input).
					mid := e.read("alice")
					e.now = e.now.Add(time.Hour)
					res2, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
					if err != nil && !errors.As(err, &ae) {
						t.Fatalf("second Condense: %v", err)
					}
					checkNothingLost(t, mid, e.read("alice"), e.archiveText("alice"), res2)
				}
				t.Logf("%s: %s %s", name, res.Status, res.Reason)
			})
		}
	}
}

// TestBinaryFilesAreRefused: NUL bytes and invalid UTF-8 abort with
// parse-failed and a message naming the line; nothing is archived.
func TestBinaryFilesAreRefused(t *testing.T) {
	base := string(memoryFile(20, 800))
	for name, data := range map[string]string{
		"nul-in-kept":     base + "## tail\nbin\x00ary\n",
		"nul-in-evicted":  strings.Replace(base, "marker-0001", "mark\x00er", 1),
		"invalid-utf8":    strings.Replace(base, "marker-0002", "mark\xff\xfeer", 1),
		"truncated-rune":  base + "## tail\n\xe2\x82\n",
		"surrogate-utf8":  base + "## tail\n\xed\xa0\x80\n",
		"overlong-encode": base + "## tail\n\xc0\xaf\n",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, &fakeSum{})
			e.write("alice", []byte(data))
			res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			var ae *AbortError
			if !errors.As(err, &ae) || ae.Reason != ReasonParseFailed || !strings.Contains(ae.Message, "line ") {
				t.Fatalf("res %+v err %v; want a parse-failed abort naming the line", res, err)
			}
			if string(e.read("alice")) != data {
				t.Fatal("file changed")
			}
			if a := e.archiveText("alice"); a != "" {
				t.Fatalf("archived %d bytes of a file that cannot be parsed", len(a))
			}
		})
	}
}

// TestPinnedRegionShortWrappedFactKept: a line in the pinned region that
// only looks like a placeholder by the ≤4-word heuristic ("*Nothing runs
// on Fridays*", "(none on staging)") is a durable fact someone wrote. It is
// dropped by the rebuild — and the verification does not notice, because
// it uses the same heuristic — so the line vanishes from memory.md and is
// in neither the archive nor the condensed history.
func TestPinnedRegionShortWrappedFactKept(t *testing.T) {
	facts := []string{"*Nothing runs on Fridays*", "(none on staging hosts)", "_None of it is cached_"}
	data := "# Memory — alice (alice)\n\n" + memfile.HeadingPinned + "\n- real fact\n"
	for _, f := range facts {
		data += "- " + f + "\n"
	}
	data += memfile.HeadingCondensed + "\n" + memfile.Placeholder + "\n" + memfile.HeadingRecent + "\n" + string(memoryFile(20, 1000))[len("# Memory — alice (alice)\n\n"):]
	e := newEnv(t, &fakeSum{})
	e.write("alice", []byte(data))
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	if err != nil {
		t.Fatalf("%+v %v", res, err)
	}
	now := string(e.read("alice"))
	all := now + e.archiveText("alice")
	for _, f := range facts {
		if !strings.Contains(all, f) {
			t.Errorf("pinned-region line %q is gone after condensation (not in memory.md, archive or condensed history)", f)
		}
	}
}

// TestHugeSingleTokenLineBounded: an evicted section holding one very long
// "word" (a base64 blob, a minified path) costs one word of the extractive
// summariser's word budget, so the whole blob is copied into the condensed
// history and the file can never shrink: every condensation aborts
// not-smaller and the file grows without bound.
func TestHugeSingleTokenLineBounded(t *testing.T) {
	blob := "/blob/" + strings.Repeat("QUJDRA", 40_000) // ~240 KB, one token with a path
	data := "# Memory — alice (alice)\n\n" + adversarialSec(0, blob+"\n") + adversarialSections(20, func(i int) string { return words(i, 800) + "\n" })[len(adversarialSec(0, words(0, 800)+"\n")):]
	e := newEnv(t, summarize.Extractive{})
	e.write("alice", []byte(data))
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	checkNothingLost(t, []byte(data), e.read("alice"), e.archiveText("alice"), res)
	if res.Status != StatusCondensed {
		t.Fatalf("a %d-byte file whose oldest section is one huge token cannot be condensed: %s (%v); new file would keep the %d-byte token in the condensed history", len(data), res.Reason, err, len(blob))
	}
	if nb := len(e.read("alice")); nb > len(data)/2 {
		t.Errorf("condensed file is %d bytes of the original %d", nb, len(data))
	}
}

// ---------------------------------------------------------------------------
// concurrent writers

// TestFileChangedBetweenReadAndSwapAborts: while the summary runs the file
// is rewritten in ways that are not appends; every one must abort with
// changed-during-condense and leave the other writer's bytes in place.
func TestFileChangedBetweenReadAndSwapAborts(t *testing.T) {
	orig := memoryFile(20, 1000)
	cases := map[string]func(e *env){
		"same-size-edit": func(e *env) {
			b := e.read("alice")
			b[len(b)/2] ^= 0x01
			e.write("alice", b)
		},
		"truncated":     func(e *env) { must(e.t, os.Truncate(e.path("alice"), int64(len(orig)-10))) },
		"emptied":       func(e *env) { must(e.t, os.Truncate(e.path("alice"), 0)) },
		"prepended":     func(e *env) { e.write("alice", append([]byte("new first line\n"), orig...)) },
		"crlf-now":      func(e *env) { e.write("alice", bytes.ReplaceAll(orig, []byte("\n"), []byte("\r\n"))) },
		"pinned-inline": func(e *env) { e.write("alice", append([]byte("📌 pinned by hand\n"), orig...)) },
		"replaced-then-appended": func(e *env) {
			// Same bytes, new inode (an editor's atomic save), then an append.
			e.write("alice", append(append([]byte{}, orig...), "## 2026-12-01 — late\nLATE-AFTER-SAVE\n"...))
		},
		"removed": func(e *env) { must(e.t, os.Remove(e.path("alice"))) },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			var e *env
			var after []byte
			e = newEnv(t, &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				change(e)
				after, _ = os.ReadFile(e.path("alice"))
				return summarize.Result{Condensed: "- short"}, nil
			}})
			e.write("alice", orig)
			res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			if name == "replaced-then-appended" {
				// Same prefix: carried, not aborted.
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(e.read("alice")), "LATE-AFTER-SAVE\n") {
					t.Fatal("append after an atomic save was lost")
				}
				checkNothingLost(t, after, e.read("alice"), e.archiveText("alice"), res)
				return
			}
			var ae *AbortError
			if !errors.As(err, &ae) || ae.Reason != ReasonChanged {
				t.Fatalf("res %+v err %v; want changed-during-condense", res, err)
			}
			got, rerr := os.ReadFile(e.path("alice"))
			if name == "removed" {
				if rerr == nil {
					t.Fatalf("the removed file came back: %d bytes", len(got))
				}
				return
			}
			if !bytes.Equal(got, after) {
				t.Fatal("the other writer's file was overwritten")
			}
			// The evicted sections of the first read are in the archive.
			arch := e.archiveText("alice")
			for _, s := range mustParse(t, orig).Recent()[:8] {
				if !strings.Contains(arch, s.Raw) {
					t.Errorf("section %q not archived", s.Heading)
				}
			}
		})
	}
}

// TestAppendShapesCarried: appends of awkward shapes during the summary
// (a partial line, an open fence, a region heading, a lone CR, a
// heading-only line, a BOM in the middle) are carried byte for byte or the
// condensation aborts; they are never lost.
func TestAppendShapesCarried(t *testing.T) {
	for name, app := range map[string]string{
		"partial-line":   "partial line without newline",
		"open-fence":     "```\n## inside an appended fence\n",
		"pinned-region":  memfile.HeadingPinned + "\n- appended fact\n",
		"recent-region":  memfile.HeadingRecent + "\nappended recent body\n",
		"lone-cr":        "## 2026-12-02 — cr\rstill the heading line\r",
		"crlf":           "## 2026-12-02 — crlf\r\nAPPENDED-CRLF\r\n",
		"heading-only":   "## 2026-12-03 — heading only",
		"mid-bom":        "\uFEFF## not a heading: BOM mid-file\n",
		"many-sections":  strings.Repeat("## a\nAPPENDED\n", 200),
		"pin-line":       "📌 appended pin\n",
		"bare-text":      "text with no heading\n",
		"condensed-head": memfile.HeadingCondensed + "\n- appended history\n",
	} {
		t.Run(name, func(t *testing.T) {
			var e *env
			e = newEnv(t, &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				f, err := os.OpenFile(e.path("alice"), os.O_WRONLY|os.O_APPEND, 0)
				must(t, err)
				_, err = f.WriteString(app)
				must(t, err)
				must(t, f.Close())
				return summarize.Result{Condensed: "- short"}, nil
			}})
			orig := memoryFile(20, 1200)
			e.write("alice", orig)
			res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			var ae *AbortError
			if err != nil && !errors.As(err, &ae) {
				t.Fatal(err)
			}
			cur := append(append([]byte{}, orig...), app...)
			got := e.read("alice")
			if res.Status == StatusCondensed {
				if !bytes.HasSuffix(got, []byte(app)) && !bytes.Contains(got, []byte(app)) {
					t.Fatalf("append %q not in the result", app)
				}
				checkNothingLost(t, cur, got, e.archiveText("alice"), res)
			} else if !bytes.Equal(got, cur) {
				t.Fatalf("aborted (%s) but the file is not the appended file", res.Reason)
			}
			t.Logf("%s: %s %s", name, res.Status, res.Reason)
		})
	}
}

// TestCondenseWhileGoroutinesWrite: condensations run round after round
// while goroutines append (no lock, O_APPEND) and others do locked
// remember-style updates (atomicio.Update + memfile.AppendSection). Every
// line of both is in the file or the archive at the end.
func TestCondenseWhileGoroutinesWrite(t *testing.T) {
	e := newEnv(t, slowSum{inner: &fakeSum{}, delay: 2 * time.Millisecond})
	e.r.salvageGrace = DefaultSalvageGrace
	e.r.lockTimeout = 10 * time.Second
	e.cfg.Reflector.RecentKeep = 3
	e.write("alice", memoryFile(20, 800))
	path := e.path("alice")
	pad := strings.Repeat("padding words so the section is worth evicting. ", 8)

	const appenders, updaters, per = 3, 3, 25
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 1000)
	for a := range appenders {
		wg.Go(func() {
			for i := range per {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					errs <- err
					return
				}
				_, err = fmt.Fprintf(f, "## 2026-12-01 — raw %d-%d\nRAW-%d-%04d\n%s\n", a, i, a, i, pad)
				f.Close()
				if err != nil {
					errs <- err
				}
				if i%5 == 4 {
					time.Sleep(10 * time.Millisecond) // pacing, so appends span many condensations
				}
			}
		})
	}
	for u := range updaters {
		wg.Go(func() {
			for i := range per {
				err := atomicio.Update(context.Background(), path, 0o644, func(old []byte) ([]byte, error) {
					return memfile.AppendSection(old, fmt.Sprintf("2026-12-02 — upd %d-%d", u, i), fmt.Sprintf("UPD-%d-%04d\n%s", u, i, pad))
				})
				if err != nil {
					errs <- fmt.Errorf("update %d-%d: %w", u, i, err)
				}
				// Pace the updaters: atomicio.Lock is a polling lock with
				// backoff, so writers in a tight loop would starve the
				// condensation of the lock (it would only run after them).
				time.Sleep(time.Duration(10+10*(i%3)) * time.Millisecond)
			}
		})
	}
	var out outcomes
	var cwg sync.WaitGroup
	cwg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			out.add(e.r.Condense(context.Background(), "alice", Options{Force: true}))
		}
	})
	wg.Wait()
	close(stop)
	cwg.Wait()
	// One final condensation with nobody writing.
	if _, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
		var ae *AbortError
		if !errors.As(err, &ae) {
			t.Fatal(err)
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all := string(e.read("alice")) + e.archiveText("alice")
	lost := 0
	for k := range max(appenders, updaters) {
		for i := range per {
			for _, m := range []string{fmt.Sprintf("RAW-%d-%04d\n", k, i), fmt.Sprintf("UPD-%d-%04d\n", k, i)} {
				if !strings.Contains(all, m) {
					lost++
					if lost <= 5 {
						t.Errorf("line %q lost", strings.TrimSpace(m))
					}
				}
			}
		}
	}
	for i := range 20 {
		if !strings.Contains(all, fmt.Sprintf("marker-%04d\n", i)) {
			t.Errorf("original section %d lost", i)
		}
	}
	out.checkReasons(t)
	t.Logf("%d condensations (%d carried appends), aborts %v, skips %v, %d lines lost", out.condensed, out.carried, out.reasons, out.skips, lost)
	if out.condensed < 2 {
		t.Errorf("only %d condensations overlapped the writers", out.condensed)
	}
	mustParse(t, e.read("alice"))
}

// ---------------------------------------------------------------------------
// real processes: late appenders, kills

// TestCondenseSalvagesShellAppender: an agent process opened the file
// before the swap and writes after it; the condensation keeps watching
// while the process holds the old file open and carries the line over.
func TestCondenseSalvagesShellAppender(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.r.salvageGrace = DefaultSalvageGrace
	e.write("alice", memoryFile(20, 1000))
	var res Result
	if err := appendDuringSwap(t, e.path("alice"), "SHELL-LATE-LINE", func() (err error) {
		res, err = e.r.Condense(context.Background(), "alice", Options{Force: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(e.read("alice")), "SHELL-LATE-LINE\n") || res.SalvagedBytes == 0 {
		t.Fatalf("late line not salvaged (salvaged %d bytes)", res.SalvagedBytes)
	}
}

// appendDuringSwap runs op while an agent (a shell) holds path open for
// append, and has the agent write line once op has replaced the file, as
// an agent that opened it just before the swap would. It returns op's
// error.
func appendDuringSwap(t *testing.T, path, line string, op func() error) error {
	t.Helper()
	sh, stdin, _ := filetest.StartShAppender(t, path, line)
	orig := filetest.Inode(t, path)
	done := make(chan error, 1)
	go func() { done <- op() }()
	filetest.WaitSwap(t, path, orig, done)
	_, err := io.WriteString(stdin, "go\n")
	must(t, err)
	must(t, sh.Wait())
	return <-done
}

// TestRestoreLosesLateAppend: Restore swaps the memory file while an
// agent holds it open for append. Condensation and remember both salvage
// what such an agent writes after the swap; Restore does not, so the line
// goes into the unlinked old file: it is in neither memory.md nor the
// pre-restore backup (which was copied before the write).
func TestRestoreLosesLateAppend(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.r.salvageGrace = DefaultSalvageGrace
	ctx := context.Background()
	e.write("alice", memoryFile(20, 1000))
	if _, err := e.r.Condense(ctx, "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(time.Minute)
	if err := appendDuringSwap(t, e.path("alice"), "LINE-WRITTEN-DURING-RESTORE", func() error {
		_, err := e.r.Restore(ctx, "alice", Latest)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	all := string(e.read("alice")) + e.allBackups("alice") + e.archiveText("alice")
	if !strings.Contains(all, "LINE-WRITTEN-DURING-RESTORE\n") {
		t.Fatal("a line the agent appended while Restore swapped the file is in neither memory.md, any backup nor the archive")
	}
}

// TestKilledAtEachStep kills a condensing process (SIGKILL) right as
// each step becomes visible on disk — archive written, backup written, file
// swapped — and checks the file is the original or a verified
// condensation and that every section is in the file or the archive.
func TestKilledAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	orig, p := killedFile(t)
	steps := map[string]func(h home.Home) bool{
		"archive": func(h home.Home) bool {
			ents, _ := os.ReadDir(filepath.Join(h.ArchiveRoot(), "alice"))
			for _, e := range ents {
				if archiveNameRE.MatchString(e.Name()) {
					return true
				}
			}
			return false
		},
		"backup": func(h home.Home) bool {
			bs, _ := Backups(h, "alice")
			return len(bs) > 0
		},
		"swap": func(h home.Home) bool {
			mem, _ := h.MemoryPath("alice")
			b, err := os.ReadFile(mem)
			return err == nil && !bytes.Equal(b, orig)
		},
	}
	outcomes := map[string]int{}
	for step, seen := range steps {
		t.Run(step, func(t *testing.T) {
			h, path := aliceHome(t, orig)
			cmd, rd := startCondenser(t, h)
			exited := make(chan error, 1)
			go func() { _, _ = io.Copy(io.Discard, rd); exited <- cmd.Wait() }()
			killed := false
		poll:
			for {
				select {
				case <-exited:
					break poll
				default:
				}
				if seen(h) {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					<-exited
					killed = true
					break poll
				}
				time.Sleep(100 * time.Microsecond)
			}
			got, arch, condensed := checkKilled(t, h, path, orig, p, fmt.Sprintf("killed=%v", killed))
			if condensed {
				outcomes[step+"/condensed"]++
			} else {
				outcomes[step+"/original"]++
			}
			checkNothingLost(t, orig, got, string(bytes.Join(arch, nil)), Result{Status: map[bool]string{true: StatusCondensed, false: StatusSkipped}[condensed]})
			checkNoMinableLeftovers(t, h, 0)
			// A fresh condensation after the crash completes and keeps
			// everything (archive retries are idempotent).
			r := New(Deps{Home: h, Summarizer: &fakeSum{}, SalvageGrace: -1})
			res, err := r.Condense(context.Background(), "alice", Options{Force: true})
			var ae *AbortError
			if err != nil && !errors.As(err, &ae) {
				t.Fatal(err)
			}
			now, _ := os.ReadFile(path)
			arch2, _ := r.readArchive("alice")
			a2 := bytes.Join(arch2, nil)
			checkNothingLost(t, got, now, string(a2), res)
			for _, s := range p.evicted {
				if n := bytes.Count(a2, []byte(s.Raw)); n != 1 {
					t.Errorf("section %q is %d times in the archive after the retry", s.Heading, n)
				}
			}
		})
	}
	t.Logf("outcomes %v", outcomes)
}

// TestKilledDuringSalvageLosesLateAppend: an agent holds the memory
// file open for append when the condensation swaps it; the condensing
// process is killed while it watches the old file for late writes (after
// the rename, before it can salvage), then the agent writes. The line is
// in the unlinked old inode only: not in memory.md, not in the archive and
// not in the backup, which is a copy taken before the swap (the reflector's
// own log message, "they are in the backup", assumes otherwise).
func TestKilledDuringSalvageLosesLateAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	h, path := aliceHome(t, memoryFile(40, 1200))
	sh, stdin, _ := filetest.StartShAppender(t, path, "LATE-LINE-DURING-CRASH")
	orig := filetest.Inode(t, path)

	cmd, rd := startCondenser(t, h)
	exited := make(chan error, 1)
	go func() { _, _ = io.Copy(io.Discard, rd); exited <- cmd.Wait() }()
	filetest.WaitSwap(t, path, orig, exited)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	_, err := io.WriteString(stdin, "go\n")
	must(t, err)
	must(t, sh.Wait())

	// The next locked access to the file (any write, or the reflector's
	// next read) carries what reached the replaced file.
	r := &Reflector{home: h}
	if _, err := r.readLocked(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	now, _ := os.ReadFile(path)
	all.Write(now)
	arch, _ := r.readArchive("alice")
	for _, a := range arch {
		all.Write(a)
	}
	bs, _ := Backups(h, "alice")
	for _, b := range bs {
		data, _ := os.ReadFile(b.Path)
		all.Write(data)
	}
	if !strings.Contains(all.String(), "LATE-LINE-DURING-CRASH\n") {
		t.Fatal("a line an agent appended right after the swap is lost when the condensing process dies before salvaging it: not in memory.md, the archive or the backup")
	}
}

// ---------------------------------------------------------------------------
// unusable directories and path tricks

// TestFIFOMemoryFileRefused: a FIFO where an agent's memory.md should be must
// be refused with an error, not block the condensation (and the pass over
// every other agent) until something writes to the FIFO.
func TestFIFOMemoryFileRefused(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	p := e.path("alice")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("condensing a FIFO reported no error")
			}
			return
		default:
		}
		w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			err := <-done
			t.Fatalf("Condense blocked reading a FIFO memory file (holding its lock) until a writer appeared; then: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestUnusableDirectoriesAbortCleanly: the archive, backups and palace (state)
// directories are files, not directories. Each must abort cleanly (or, for
// the state file, still condense), leave the memory file untouched on
// abort, and succeed without duplicates once repaired.
func TestUnusableDirectoriesAbortCleanly(t *testing.T) {
	orig := memoryFile(20, 1000)
	for name, block := range map[string]func(e *env) string{
		"archive": func(e *env) string {
			p := filepath.Join(e.home.ArchiveRoot(), "alice")
			must(t, os.WriteFile(p, []byte("in the way"), 0o644))
			return p
		},
		"backups": func(e *env) string {
			p := e.home.BackupsDir()
			must(t, os.RemoveAll(p))
			must(t, os.WriteFile(p, []byte("in the way"), 0o644))
			return p
		},
		"backups-stamp-is-file": func(e *env) string {
			// Every name the backup could take is a file.
			p := filepath.Join(e.home.BackupsDir(), e.now.UTC().Format(stampLayout))
			must(t, os.WriteFile(p, []byte("in the way"), 0o644))
			return p
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, &fakeSum{})
			e.write("alice", orig)
			blocked := block(e)
			res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			var ae *AbortError
			if err != nil && !errors.As(err, &ae) {
				t.Fatal(err)
			}
			checkNothingLost(t, orig, e.read("alice"), "", res)
			if res.Status == StatusCondensed {
				t.Fatalf("condensed although the %s directory is unusable", name)
			}
			if res.Status == StatusAborted && (ae.Message == "") {
				t.Errorf("abort without message")
			}
			t.Logf("%s: %s %s %s", name, res.Status, res.Reason, res.Message)
			must(t, os.RemoveAll(blocked))
			if name == "backups" {
				must(t, os.MkdirAll(blocked, 0o755))
			}
			e.now = e.now.Add(time.Hour)
			cur := e.read("alice")
			res2, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			if err != nil {
				t.Fatalf("after repair: %+v %v", res2, err)
			}
			checkNothingLost(t, cur, e.read("alice"), e.archiveText("alice"), res2)
			arch := e.archiveText("alice")
			for _, s := range mustParse(t, cur).Recent()[:len(mustParse(t, cur).Recent())-e.cfg.Reflector.RecentKeep] {
				if n := strings.Count(arch, s.Raw); n != 1 {
					t.Errorf("section %q archived %d times", s.Heading, n)
				}
			}
		})
	}
}

// TestManyBackupsRetention: with hundreds of stale backups (some
// broken, some future-dated) a condensation still backs up, prunes to the
// retention, and the newest backup is the file it replaced.
func TestManyBackupsRetention(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.cfg.Reflector.Retention = 3
	for i := range 300 {
		name := e.now.Add(-time.Duration(i+1) * time.Second).UTC().Format(stampLayout)
		d := filepath.Join(e.home.BackupsDir(), name, "alice")
		must(t, os.MkdirAll(d, 0o755))
		if i%50 != 7 { // a few broken ones: no memory.md
			must(t, os.WriteFile(filepath.Join(d, "memory.md"), []byte("old backup\n"), 0o644))
		}
	}
	// Same second as now, taken by a plain file.
	must(t, os.WriteFile(filepath.Join(e.home.BackupsDir(), "junk.txt"), []byte("x"), 0o644))
	orig := memoryFile(20, 1000)
	e.write("alice", orig)
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	bs := e.backups("alice")
	if len(bs) != 3 {
		t.Errorf("%d backups after prune, want 3", len(bs))
	}
	if bs[0].Name != res.Backup {
		t.Errorf("newest backup %s, the condensation wrote %s", bs[0].Name, res.Backup)
	}
	if data, _ := os.ReadFile(bs[0].Path); !bytes.Equal(data, orig) {
		t.Error("newest backup is not the replaced file")
	}
}

// TestSymlinkedAgentFileKeepsLink: memory.md is a symlink (to a file elsewhere
// in the agent's directory). Condensation replaces the target, keeps the
// link, and loses nothing.
func TestSymlinkedAgentFileKeepsLink(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	p := e.path("alice")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	real := filepath.Join(filepath.Dir(p), "real-memory.txt")
	orig := memoryFile(20, 1000)
	must(t, os.WriteFile(real, orig, 0o644))
	must(t, os.Symlink("real-memory.txt", p))
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if li, err := os.Lstat(p); err != nil || li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("memory.md is no longer a symlink")
	}
	now, _ := os.ReadFile(real)
	checkNothingLost(t, orig, now, e.archiveText("alice"), res)
}

// TestSwapOverwritesConcurrentAtomicSave: the compare-and-swap reads
// the file under the lock, but an editor's atomic save (temp + rename, no
// lock) that lands after that read and before the reflector's rename is
// replaced without a trace: it is not in memory.md, not in the backup
// (a copy of the read) and not in the archive. The design promises never
// to overwrite a line that was not read.
func TestSwapOverwritesConcurrentAtomicSave(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	orig := memoryFile(20, 1000)
	e.write("alice", orig)
	saved := append(append([]byte{}, orig...), "## 2026-12-05 — edited by hand\nSAVED-BY-EDITOR\n"...)
	swap := e.r.swapFile
	e.r.swapFile = func(path string, old *os.File, off int64, data []byte) (atomicio.SwapResult, error) {
		tmp := path + ".editor-save"
		must(t, os.WriteFile(tmp, saved, 0o644))
		must(t, os.Rename(tmp, path)) // the editor's save, just before ours
		return swap(path, old, off, data)
	}
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	var ae *AbortError
	if err != nil && !errors.As(err, &ae) {
		t.Fatal(err)
	}
	all := string(e.read("alice")) + e.archiveText("alice") + e.allBackups("alice")
	if !strings.Contains(all, "SAVED-BY-EDITOR\n") {
		t.Fatalf("status %s: a line saved by an editor just before the swap is in neither memory.md, the archive nor a backup", res.Status)
	}
}
