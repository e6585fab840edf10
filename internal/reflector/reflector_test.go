package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
	"github.com/hivemem/hivemem/internal/summarize"
)

// TestCondenseExtractive runs the whole pipeline with the real extractive
// summariser and checks every promise a condensation makes.
func TestCondenseExtractive(t *testing.T) {
	e := newEnv(t, summarize.Extractive{})
	orig := memoryFile(40, 1800)
	e.write("alice", orig)

	res, err := e.r.Condense(context.Background(), "alice", Options{})
	if err != nil {
		t.Fatalf("condense: %v", err)
	}
	if res.Status != StatusCondensed || res.Evicted != 28 || res.Kept != 12 || res.Sections != 40 {
		t.Fatalf("result = %+v", res)
	}
	got := e.read("alice")
	if int64(len(got)) != res.NewBytes || res.OldBytes != int64(len(orig)) {
		t.Errorf("sizes: file %d, result %d → %d (orig %d)", len(got), res.OldBytes, res.NewBytes, len(orig))
	}
	if len(got)*100 > len(orig)*MaxSizeRatioPct {
		t.Errorf("result %d bytes is not smaller than %d", len(got), len(orig))
	}
	of, nf := mustParse(t, orig), mustParse(t, got)
	if nf.Header != of.Header {
		t.Errorf("header changed: %q", nf.Header)
	}
	kinds := []memfile.Kind{}
	for _, s := range nf.Sections[:3] {
		kinds = append(kinds, s.Kind)
	}
	if !slices.Equal(kinds, []memfile.Kind{memfile.KindPinned, memfile.KindCondensed, memfile.KindRecent}) {
		t.Errorf("regions = %v", kinds)
	}
	if nf.Condensed() == "" || !strings.Contains(nf.Condensed(), "note 27") {
		t.Errorf("condensed history lacks the newest evicted section:\n%s", nf.Condensed())
	}
	kept, want := nf.Recent(), of.Recent()[28:]
	if len(kept) != 12 {
		t.Fatalf("kept %d sections", len(kept))
	}
	for i := range kept {
		if kept[i].Raw != want[i].Raw {
			t.Errorf("kept section %d differs", i)
		}
	}
	arch := e.archiveText("alice")
	if !strings.HasPrefix(arch, "# Archive — alice\n") {
		t.Errorf("archive header: %.40q", arch)
	}
	for _, s := range of.Recent()[:28] {
		if !strings.Contains(arch, s.Raw) {
			t.Errorf("section %q not in archive", s.Heading)
		}
	}
	if want := filepath.Join(e.home.ArchiveRoot(), "alice", "2026-11.md"); res.Archive != want {
		t.Errorf("archive path %s, want %s", res.Archive, want)
	}
	bs := e.backups("alice")
	if len(bs) != 1 || bs[0].Name != "20261129T135100Z" || res.Backup != bs[0].Name {
		t.Fatalf("backups = %+v, result backup %q", bs, res.Backup)
	}
	if b, _ := os.ReadFile(bs[0].Path); string(b) != string(orig) {
		t.Error("backup is not the original file")
	}
	evs := e.eventsOf("condense")
	if len(evs) != 1 || evs[0].Agent != "alice" {
		t.Fatalf("condense events = %+v", evs)
	}
	for _, k := range []string{"oldBytes", "newBytes", "evicted", "kept", "hoisted", "backup", "archive", "durationMs", "summarizer"} {
		if _, ok := evs[0].Data[k]; !ok {
			t.Errorf("condense event lacks %q: %v", k, evs[0].Data)
		}
	}
	if !slices.Equal(e.miner.paths, []string{res.Archive, e.path("alice")}) {
		t.Errorf("mined %v", e.miner.paths)
	}

	// A second condensation merges the old condensed text and only
	// archives the newly evicted sections.
	e.now = e.now.Add(time.Second)
	f2 := string(got)
	for i := 40; i < 60; i++ {
		f2 += sectionText(i, 1500)
	}
	e.write("alice", []byte(f2))
	res2, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Evicted != 20 {
		t.Errorf("second pass evicted %d, want 20", res2.Evicted)
	}
	arch2 := e.archiveText("alice")
	if strings.Count(arch2, "marker-0000\n") != 1 || !strings.Contains(arch2, "marker-0047\n") {
		t.Error("archive duplicated or missed sections on the second pass")
	}
}

// TestTriggers checks the trigger settings, read live on every call.
func TestTriggers(t *testing.T) {
	cases := []struct {
		name   string
		file   []byte
		mod    func(*config.Reflector)
		opts   Options
		status string
		reason string
	}{
		{"below min bytes", memoryFile(60, 100), nil, Options{}, StatusSkipped, SkipBelowMin},
		{"under both triggers", memoryFile(30, 1000), nil, Options{}, StatusSkipped, SkipUnderTrigger},
		{"section trigger", memoryFile(51, 400), nil, Options{}, StatusCondensed, ""},
		{"byte trigger", memoryFile(20, 3500), nil, Options{}, StatusCondensed, ""},
		{"min bytes lowered", memoryFile(60, 100), func(r *config.Reflector) { r.MinBytes = 1000 }, Options{}, StatusCondensed, ""},
		{"section trigger raised", memoryFile(51, 400), func(r *config.Reflector) { r.SectionTrigger = 100 }, Options{}, StatusSkipped, SkipUnderTrigger},
		{"byte pct raised", memoryFile(20, 3500), func(r *config.Reflector) { r.ByteTriggerPct = 90 }, Options{}, StatusSkipped, SkipUnderTrigger},
		{"force skips triggers", memoryFile(30, 1000), nil, Options{Force: true}, StatusCondensed, ""},
		{"disabled", memoryFile(51, 400), func(r *config.Reflector) { r.Enabled = false }, Options{}, StatusSkipped, SkipDisabled},
		{"disabled beats force", memoryFile(51, 400), func(r *config.Reflector) { r.Enabled = false }, Options{Force: true}, StatusSkipped, SkipDisabled},
		{"nothing to evict", memoryFile(12, 3000), nil, Options{Force: true}, StatusSkipped, SkipNothingToEvict},
		{"recent keep", memoryFile(51, 400), func(r *config.Reflector) { r.RecentKeep = 40 }, Options{}, StatusCondensed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, &fakeSum{})
			if c.mod != nil {
				c.mod(&e.cfg.Reflector)
			}
			e.write("alice", c.file)
			res, err := e.r.Condense(context.Background(), "alice", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status || res.Reason != c.reason {
				t.Fatalf("status %s (%s: %s), want %s (%s)", res.Status, res.Reason, res.Message, c.status, c.reason)
			}
			if c.status == StatusCondensed && res.Kept != e.cfg.Reflector.RecentKeep {
				t.Errorf("kept %d, want recent_keep %d", res.Kept, e.cfg.Reflector.RecentKeep)
			}
			if c.status == StatusSkipped && string(e.read("alice")) != string(c.file) {
				t.Error("a skip changed the file")
			}
		})
	}
}

// TestSettingsLive: the getter is called on every condensation, so a
// config change applies to the next one.
func TestSettingsLive(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.write("alice", memoryFile(30, 1000))
	e.cfg.Reflector.Enabled = false
	if res, _ := e.r.Condense(context.Background(), "alice", Options{}); res.Reason != SkipDisabled {
		t.Fatalf("got %+v", res)
	}
	e.cfg.Reflector.Enabled = true
	if res, _ := e.r.Condense(context.Background(), "alice", Options{}); res.Reason != SkipUnderTrigger {
		t.Fatalf("got %+v", res)
	}
	e.cfg.Reflector.SectionTrigger = 20
	e.cfg.Reflector.RecentKeep = 5
	res, err := e.r.Condense(context.Background(), "alice", Options{})
	if err != nil || res.Status != StatusCondensed || res.Kept != 5 {
		t.Fatalf("got %+v, %v", res, err)
	}
	e.cfg.Reflector.Interval = config.Duration{Duration: 7 * time.Minute}
	if e.r.Interval() != 7*time.Minute {
		t.Errorf("Interval() = %s", e.r.Interval())
	}
}

// TestAbortReasons drives every abort a whole condensation can reach and
// checks the reason, that the file is untouched, that no backup is left,
// and the event and backoff.
func TestAbortReasons(t *testing.T) {
	orig := memoryFile(30, 1000)
	type setup func(e *env) // runs after the file is written
	cases := []struct {
		reason  string
		sum     func(e *env) *fakeSum
		setup   setup
		msg     string // substring of the message
		noEvent bool
	}{
		{reason: ReasonLocked, setup: func(e *env) {
			unlock, err := atomicio.Lock(context.Background(), e.path("alice"))
			if err != nil {
				e.t.Fatal(err)
			}
			e.t.Cleanup(func() { _ = unlock() })
		}, msg: "locked by another writer"},
		{reason: ReasonReadFailed, setup: func(e *env) {
			must(e.t, os.Remove(e.path("alice")))
			must(e.t, os.Mkdir(e.path("alice"), 0o755))
		}, msg: "is a directory"},
		{reason: ReasonParseFailed, setup: func(e *env) {
			e.write("alice", append(append([]byte{}, orig...), 0, 'x', '\n'))
		}, msg: "NUL byte"},
		{reason: ReasonSummarizerConfig, setup: func(e *env) {
			e.r.sum = nil
			e.cfg.Summarizer.Provider = "telepathy"
		}, msg: `unknown provider "telepathy"`},
		{reason: ReasonArchiveFailed, setup: func(e *env) {
			must(e.t, os.WriteFile(filepath.Join(e.home.ArchiveRoot(), "alice"), []byte("in the way"), 0o644))
		}, msg: "archive"},
		{reason: ReasonSummarizeFailed, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				return summarize.Result{}, &summarize.Error{Provider: "anthropic", Reason: summarize.ReasonFailed, Status: 429, Message: "rate_limit_error: slow down"}
			}}
		}, msg: "HTTP 429: rate_limit_error: slow down"},
		{reason: ReasonChanged, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				// An edit in the middle of the file, as `hivemem pin` or a
				// human would make it.
				b := e.read("alice")
				e.write("alice", []byte(strings.Replace(string(b), "marker-0020", "marker-XXXX", 1)))
				return summarize.Result{Condensed: "- short"}, nil
			}}
		}, msg: "other than by appends"},
		{reason: ReasonChanged, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				must(e.t, os.WriteFile(e.path("alice"), orig[:len(orig)/2], 0o644))
				return summarize.Result{Condensed: "- short"}, nil
			}}
		}, msg: "other than by appends"},
		{reason: ReasonCondensedEmpty, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				return summarize.Result{Condensed: "  _(none yet)_  "}, nil
			}}
		}},
		{reason: ReasonNotSmaller, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				return summarize.Result{Condensed: strings.Repeat("- verbose summary line\n", 1500)}, nil
			}}
		}, msg: "over 95%"},
		{reason: ReasonArchiveIncomplete, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				// Someone truncates the archive while the summary runs.
				files, _ := filepath.Glob(filepath.Join(e.home.ArchiveRoot(), "alice", "*.md"))
				for _, f := range files {
					must(e.t, os.WriteFile(f, []byte("# Archive — alice\n"), 0o644))
				}
				return summarize.Result{Condensed: "- short"}, nil
			}}
		}, msg: "not verbatim in the archive"},
		{reason: ReasonBackupFailed, setup: func(e *env) {
			must(e.t, os.RemoveAll(e.home.BackupsDir()))
			must(e.t, os.WriteFile(e.home.BackupsDir(), []byte("in the way"), 0o644))
		}, msg: "backup"},
		{reason: ReasonWriteFailed, setup: func(e *env) {
			e.r.swapFile = func(string, *os.File, int64, []byte) (atomicio.SwapResult, error) {
				return atomicio.SwapResult{}, errors.New("disk full")
			}
		}, msg: "disk full"},
		{reason: ReasonCanceled, sum: func(e *env) *fakeSum {
			return &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				e.cancel()
				<-ctx.Done()
				return summarize.Result{}, &summarize.Error{Provider: "fake", Reason: summarize.ReasonFailed, Message: "canceled", Err: ctx.Err()}
			}}
		}},
	}
	seen := map[string]bool{}
	for i, c := range cases {
		seen[c.reason] = true
		t.Run(fmt.Sprintf("%02d-%s", i, c.reason), func(t *testing.T) {
			fs := &fakeSum{}
			e := newEnv(t, fs)
			if c.sum != nil {
				e.r.sum = c.sum(e)
			}
			e.write("alice", orig)
			if c.setup != nil {
				c.setup(e)
			}
			before, _ := os.ReadFile(e.path("alice"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.cancel = cancel
			res, err := e.r.Condense(ctx, "alice", Options{Force: true})
			var ae *AbortError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *AbortError (result %+v)", err, res)
			}
			if ae.Reason != c.reason || res.Reason != c.reason || res.Status != StatusAborted {
				t.Fatalf("reason %q / %q (%s), want %q", ae.Reason, res.Reason, res.Message, c.reason)
			}
			if !strings.Contains(res.Message, c.msg) {
				t.Errorf("message %q does not contain %q", res.Message, c.msg)
			}
			if c.reason != ReasonChanged && c.reason != ReasonReadFailed {
				if now, _ := os.ReadFile(e.path("alice")); string(now) != string(before) {
					t.Error("an abort changed the memory file")
				}
			}
			if bs, _ := Backups(e.home, "alice"); len(bs) != 0 {
				t.Errorf("an aborted attempt left backups: %+v", bs)
			}
			evs := e.eventsOf("condense-abort")
			if len(evs) != 1 || evs[0].Reason != c.reason {
				t.Fatalf("abort events = %+v", evs)
			}
			st := e.r.State("alice")
			if c.reason == ReasonCanceled || Benign(c.reason) {
				if st.Failures != 0 || res.NextAttempt != nil {
					t.Errorf("a %s abort counted as a failure: %+v", c.reason, st)
				}
				return
			}
			if st.Failures != 1 || st.LastReason != c.reason || !st.NextAttempt.Equal(e.now.Add(BackoffMin)) {
				t.Errorf("backoff state = %+v", st)
			}
		})
	}
	// Verification-only reasons are driven through verify below.
	for _, r := range []string{ReasonRegionsMissing, ReasonRegionsDuplicated, ReasonRegionsOrder, ReasonPinnedLost, ReasonKeptChanged, ReasonOutsideChanged} {
		seen[r] = true
	}
	for _, r := range AbortReasons {
		if !seen[r] {
			t.Errorf("abort reason %q has no test", r)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestVerify feeds verify results that a correct Build never produces, to
// prove each rule catches what it is for.
func TestVerify(t *testing.T) {
	src := "# Memory — alice (alice)\n📌 header fact\n\n" +
		memfile.HeadingPinned + "\n- old fact\n" +
		memfile.HeadingCondensed + "\nolder history\n" +
		memfile.HeadingRecent + "\nrecent body line\n" +
		sectionText(1, 3000) + sectionText(2, 3000) + "## kept one\n📌 kept fact\nbody\n" + "## kept two\nbody two\n"
	f := mustParse(t, []byte(src))
	p := newPlan(f, 2)
	good := p.build("- new history", []string{"hoisted fact"})
	arch := [][]byte{[]byte("# Archive — alice\n\n" + p.evicted[0].Raw + p.evicted[1].Raw)}
	if _, chk := verify(verifyInput{plan: p, out: good, oldSize: len(src), archive: arch}); chk != nil {
		t.Fatalf("good result rejected: %s: %s", chk.reason, chk.msg)
	}
	goodS := string(good)
	rep := func(old, new string) []byte {
		if !strings.Contains(goodS, old) {
			t.Fatalf("test bug: %q not in result", old)
		}
		return []byte(strings.Replace(goodS, old, new, 1))
	}
	cases := []struct {
		name   string
		out    []byte
		arch   [][]byte
		reason string
	}{
		{"no pinned region", rep(memfile.HeadingPinned+"\n", ""), arch, ReasonRegionsMissing},
		{"no recent region", rep(memfile.HeadingRecent+"\n", "## Recentish\n"), arch, ReasonRegionsMissing},
		{"two condensed regions", rep(memfile.HeadingRecent+"\n", memfile.HeadingCondensed+"\nx\n"+memfile.HeadingRecent+"\n"), arch, ReasonRegionsDuplicated},
		{"recent before condensed", rep(memfile.HeadingCondensed+"\n- new history\n"+memfile.HeadingRecent+"\n", memfile.HeadingRecent+"\n"+memfile.HeadingCondensed+"\n- new history\n"), arch, ReasonRegionsOrder},
		{"section before the regions", rep(memfile.HeadingPinned+"\n", "## stray\n"+memfile.HeadingPinned+"\n"), arch, ReasonRegionsOrder},
		{"condensed empty", rep("- new history\n", "_(none yet)_\n"), arch, ReasonCondensedEmpty},
		{"not smaller", append(append([]byte{}, good...), strings.Repeat("padding\n", 1000)...), arch, ReasonNotSmaller},
		{"pinned fact lost", rep("- old fact\n", ""), arch, ReasonPinnedLost},
		{"header pin lost", rep("📌 header fact\n", "\n"), arch, ReasonPinnedLost},
		{"kept section edited", rep("body two", "body 2"), arch, ReasonKeptChanged},
		{"kept section dropped", rep("## kept two\nbody two\n", ""), arch, ReasonKeptChanged},
		{"header changed", rep("# Memory — alice (alice)\n", "# Memory — bob (alice)\n"), arch, ReasonOutsideChanged},
		{"recent body changed", rep("recent body line\n", "recent body line edited\n"), arch, ReasonOutsideChanged},
		{"archive incomplete", good, [][]byte{[]byte(p.evicted[0].Raw)}, ReasonArchiveIncomplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, chk := verify(verifyInput{plan: p, out: c.out, oldSize: len(src), archive: c.arch})
			if chk == nil || chk.reason != c.reason {
				t.Fatalf("got %+v, want %s", chk, c.reason)
			}
		})
	}
}

// TestHoist: 📌 lines of evicted sections and of the old condensed text
// move into the pinned region, deduped with normalisation; 📌 lines of kept
// sections stay where they are.
func TestHoist(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Memory — alice (alice)\n\n" + memfile.HeadingPinned + "\n- Deploys go through make release\n- 📌 already pinned\n")
	b.WriteString(memfile.HeadingCondensed + "\n- old summary\n📌 pinned inside condensed text\n" + memfile.HeadingRecent + "\n")
	b.WriteString("## 2026-01-01 — evicted one\n📌 The staging DB is pg-stage-2\n" + filler(1, 3000) + "\n")
	b.WriteString("## 2026-01-02 — evicted two\n- 📌 Deploys go through make release\n  📌  The staging   DB is pg-stage-2\n" + filler(2, 3000) + "\n")
	b.WriteString("## 2026-01-03 — kept\n📌 kept pin stays here\nbody\n")
	orig := b.String()

	fs := &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
		return summarize.Result{Condensed: "- two sections condensed", Hoist: []string{"- already pinned", "Releases ship on Tuesdays", "📌 Releases ship on Tuesdays"}}, nil
	}}
	e := newEnv(t, fs)
	e.cfg.Reflector.RecentKeep = 1
	e.write("alice", []byte(orig))
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	nf := mustParse(t, e.read("alice"))
	var pinned []string
	for _, s := range nf.Sections {
		if s.Kind == memfile.KindPinned {
			pinned = strings.Split(strings.TrimSpace(s.Body()), "\n")
		}
	}
	want := []string{
		"- Deploys go through make release",
		"- 📌 already pinned",
		"- 📌 pinned inside condensed text",
		"- 📌 The staging DB is pg-stage-2",
		"- Releases ship on Tuesdays",
	}
	if !slices.Equal(pinned, want) {
		t.Errorf("pinned region:\n%s\nwant:\n%s", strings.Join(pinned, "\n"), strings.Join(want, "\n"))
	}
	if res.Hoisted != 3 {
		t.Errorf("hoisted = %d, want 3", res.Hoisted)
	}
	if last := nf.Recent()[0]; !strings.Contains(last.Raw, "📌 kept pin stays here") {
		t.Error("kept pin moved")
	}
	if got := fs.request().Pinned; !slices.Contains(got, "📌 kept pin stays here") || !slices.Contains(got, "Deploys go through make release") {
		t.Errorf("summariser context pinned = %q", got)
	}
}

// TestPlaceholders: a file made from the template has placeholders in its
// regions; they are neither facts nor condensed history.
func TestPlaceholders(t *testing.T) {
	fs := &fakeSum{}
	e := newEnv(t, fs)
	data := string(memfile.Template("alice", "Alice"))
	for i := range 20 {
		data += sectionText(i, 1500)
	}
	e.write("alice", []byte(data))
	if _, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	req := fs.request()
	if req.OldCondensed != "" || len(req.Pinned) != 0 || len(req.Evicted) != 8 {
		t.Errorf("request: condensed %q, pinned %q, %d evicted", req.OldCondensed, req.Pinned, len(req.Evicted))
	}
	nf := mustParse(t, e.read("alice"))
	if p := nf.Pinned(); len(p) != 0 {
		t.Errorf("placeholder became a fact: %q", p)
	}
	if strings.Count(string(e.read("alice")), memfile.Placeholder) != 1 {
		t.Error("want exactly one placeholder (the empty pinned region)")
	}
}

// TestDuplicateRegions: two condensed and two pinned regions (hand edits,
// merges) condense into one of each that includes both.
func TestDuplicateRegions(t *testing.T) {
	fs := &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
		return summarize.Result{Condensed: req.OldCondensed + "\n- and the evicted sections"}, nil
	}}
	e := newEnv(t, fs)
	data := "# Memory — alice (alice)\n\n" +
		memfile.HeadingPinned + "\n- fact A\n" +
		memfile.HeadingCondensed + "\n- alpha history\n" +
		memfile.HeadingRecent + "\n" +
		sectionText(0, 4000) + sectionText(1, 4000) +
		memfile.HeadingCondensed + "\n- beta history\n" +
		memfile.HeadingPinned + "\n- fact B\n" +
		sectionText(2, 4000) + sectionText(3, 1000)
	e.write("alice", []byte(data))
	e.cfg.Reflector.RecentKeep = 1
	if _, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := fs.request().OldCondensed; !strings.Contains(got, "alpha history") || !strings.Contains(got, "beta history") {
		t.Errorf("summariser saw condensed %q", got)
	}
	nf := mustParse(t, e.read("alice"))
	n := map[memfile.Kind]int{}
	for _, s := range nf.Sections {
		n[s.Kind]++
	}
	if n[memfile.KindCondensed] != 1 || n[memfile.KindPinned] != 1 || n[memfile.KindRecent] != 1 || n[memfile.KindSection] != 1 {
		t.Errorf("section kinds = %v", n)
	}
	c := nf.Condensed()
	if !strings.Contains(c, "alpha history") || !strings.Contains(c, "beta history") {
		t.Errorf("condensed = %q", c)
	}
	if p := nf.Pinned(); !slices.Equal(p, []string{"fact A", "fact B"}) {
		t.Errorf("pinned = %q", p)
	}
}

// TestAppendCarried: sections an agent appends while the summary runs are
// carried into the result after the kept sections, including when the file
// had no final newline.
func TestAppendCarried(t *testing.T) {
	base := string(memoryFile(20, 1500))
	cases := []struct {
		name   string
		file   string
		append string
		// want is a substring the result must contain, proving the bytes
		// landed as the agent's file shows them.
		want     string
		sections int // ordinary sections in the result
	}{
		{"whole section", base, "## 2026-12-01 — appended\nnew line\n", "note 19\n", 13},
		{"two appends", base, "## a1\nx\n## a2\ny", "## a2\ny", 14},
		{"no final newline, append starts a line", strings.TrimRight(base, "\n"), "\n## appended\nnew line\n", "\n## appended\nnew line\n", 13},
		{"no final newline, append joins the line", strings.TrimRight(base, "\n"), "## glued\nnew line\n", "## glued\nnew line\n", 12},
		{"append extends the last section", base, "one more line of note 19\n", "one more line of note 19\n", 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
				f, err := os.OpenFile(e.path("alice"), os.O_WRONLY|os.O_APPEND, 0)
				must(t, err)
				_, err = f.WriteString(c.append)
				must(t, err)
				must(t, f.Close())
				return summarize.Result{Condensed: "- short"}, nil
			}})
			e.write("alice", []byte(c.file))
			res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			if err != nil {
				t.Fatal(err)
			}
			got := string(e.read("alice"))
			if res.AppendedBytes != int64(len(c.append)) {
				t.Errorf("appended bytes = %d, want %d", res.AppendedBytes, len(c.append))
			}
			if !strings.HasSuffix(got, c.append) || !strings.Contains(got, c.want) {
				t.Errorf("result does not end with the append:\n%s", got[max(0, len(got)-300):])
			}
			nf := mustParse(t, []byte(got))
			if n := len(nf.Recent()); n != c.sections {
				t.Errorf("%d ordinary sections, want %d", n, c.sections)
			}
			// The current file with the append, minus the evicted
			// sections, is exactly what the kept part of the result says.
			cur := mustParse(t, []byte(c.file+c.append)).Recent()[8:]
			for i, s := range nf.Recent() {
				if s.Raw != cur[i].Raw {
					t.Errorf("section %d: %q, want %q", i, s.Raw, cur[i].Raw)
				}
			}
		})
	}
}

// TestAppendIntoCondensed: text appended into a condensed region at the
// end of the file was not seen by the summariser, so it cannot be carried.
func TestAppendIntoCondensed(t *testing.T) {
	var e *env
	e = newEnv(t, &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
		f, err := os.OpenFile(e.path("alice"), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, _ = f.WriteString("- a line the summary never saw\n")
		must(t, f.Close())
		return summarize.Result{Condensed: "- short"}, nil
	}})
	data := string(memoryFile(20, 1500)) + memfile.HeadingCondensed + "\n- history at the end\n"
	e.write("alice", []byte(data))
	_, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	var ae *AbortError
	if !errors.As(err, &ae) || ae.Reason != ReasonChanged || !strings.Contains(ae.Message, "condensed history changed") {
		t.Fatalf("err = %v", err)
	}
	if !strings.HasSuffix(string(e.read("alice")), "- a line the summary never saw\n") {
		t.Error("the appended line was lost")
	}
}

// TestSalvage: bytes written to the old file after the swap (an agent that
// opened it just before the rename) are appended to the new file.
func TestSalvage(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.r.salvageGrace = 30 * time.Millisecond
	e.write("alice", memoryFile(20, 1500))
	lateCh := make(chan *os.File, 1)
	swap := e.r.swapFile
	e.r.swapFile = func(path string, old *os.File, off int64, data []byte) (atomicio.SwapResult, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return atomicio.SwapResult{}, err
		}
		lateCh <- f // opened before the rename, written after it
		return swap(path, old, off, data)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		late := <-lateCh
		time.Sleep(10 * time.Millisecond) // inside the grace
		_, _ = late.WriteString("## late\nlate line\n")
		_ = late.Close()
	}()
	res, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.SalvagedBytes != int64(len("## late\nlate line\n")) || !strings.HasSuffix(string(e.read("alice")), "## late\nlate line\n") {
		t.Errorf("salvaged %d bytes; file ends %q", res.SalvagedBytes, string(e.read("alice"))[len(e.read("alice"))-40:])
	}
}

// TestBackoff: failures back off exponentially (persisted, so a new
// Reflector honours them), Force bypasses, success resets.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 0}, {1, time.Minute}, {2, 2 * time.Minute}, {5, 16 * time.Minute}, {9, 256 * time.Minute}, {10, 6 * time.Hour}, {1000, 6 * time.Hour}} {
		if got := Backoff(c.n); got != c.want {
			t.Errorf("Backoff(%d) = %s, want %s", c.n, got, c.want)
		}
	}

	fail := true
	fs := &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
		if fail {
			return summarize.Result{}, &summarize.Error{Provider: "fake", Reason: summarize.ReasonFailed, Message: "boom"}
		}
		return summarize.Result{Condensed: "- ok"}, nil
	}}
	e := newEnv(t, fs)
	e.write("alice", memoryFile(60, 500))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		res, _ := e.r.Condense(ctx, "alice", Options{})
		if res.Reason != ReasonSummarizeFailed || res.Failures != i || !res.NextAttempt.Equal(e.now.Add(Backoff(i))) {
			t.Fatalf("attempt %d: %+v", i, res)
		}
		// Not due until the backoff has passed; a fresh Reflector (another
		// CLI run) sees the same state.
		r2 := New(Deps{Home: e.home, Summarizer: fs, Now: func() time.Time { return e.now }})
		if ok, st := r2.Due("alice"); ok || st.Failures != i {
			t.Fatalf("due right after failure %d: %+v", i, st)
		}
		if all := r2.States(); len(all) != 1 || all["alice"].Failures != i {
			t.Fatalf("States() = %+v", all)
		}
		res, _ = e.r.Condense(ctx, "alice", Options{})
		if res.Status != StatusSkipped || res.Reason != SkipBackoff {
			t.Fatalf("not backing off: %+v", res)
		}
		e.now = e.now.Add(Backoff(i))
	}
	if fs.calls != 3 {
		t.Errorf("summariser called %d times, want 3", fs.calls)
	}
	// Force bypasses the backoff; success resets it.
	e.now = e.now.Add(-time.Second)
	fail = false
	if res, err := e.r.Condense(ctx, "alice", Options{Force: true}); err != nil || res.Status != StatusCondensed {
		t.Fatalf("forced: %+v %v", res, err)
	}
	if st := e.r.State("alice"); st.Failures != 0 {
		t.Errorf("state after success = %+v", st)
	}
	// A corrupt state file does not stop condensation.
	must(t, os.WriteFile(filepath.Join(e.home.PalaceDir(), StateFile), []byte("{not json"), 0o644))
	if ok, _ := e.r.Due("alice"); !ok {
		t.Error("corrupt state blocks the agent")
	}
}

// TestPass runs one automatic pass over several agents.
func TestPass(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	e.write("big", memoryFile(60, 500))
	e.write("small", memoryFile(3, 100))
	e.write("also-big", memoryFile(20, 4000))
	res, err := e.r.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res {
		got[r.Agent] = r.Status + "/" + r.Reason
	}
	want := map[string]string{"also-big": "condensed/", "big": "condensed/", "small": "skipped/" + SkipBelowMin}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pass = %v, want %v", got, want)
	}
	e.cfg.Reflector.Enabled = false
	res, err = e.r.Pass(context.Background())
	if err != nil || len(res) != 3 || res[0].Reason != SkipDisabled {
		t.Errorf("disabled pass = %+v, %v", res, err)
	}
}

// TestDryRun: the would-be file is computed and verified, and nothing at
// all is written.
func TestDryRun(t *testing.T) {
	e := newEnv(t, summarize.Extractive{})
	orig := memoryFile(30, 1500)
	e.write("alice", orig)
	e.cfg.Reflector.Enabled = false // a dry run changes nothing, so it may run anyway
	res, err := e.r.Condense(context.Background(), "alice", Options{DryRun: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusDryRun || len(res.Output) == 0 || int64(len(res.Output)) != res.NewBytes || string(res.Before) != string(orig) {
		t.Fatalf("result %+v", res)
	}
	if string(e.read("alice")) != string(orig) {
		t.Error("dry run changed the file")
	}
	if e.archiveText("alice") != "" || len(e.backups("alice")) != 0 || len(e.eventsOf("condense")) != 0 || len(e.miner.paths) != 0 {
		t.Error("dry run wrote an archive, backup, event or mined")
	}
	if _, err := os.Stat(filepath.Join(e.home.PalaceDir(), StateFile)); err == nil {
		t.Error("dry run wrote backoff state")
	}
	// The real run produces the same file.
	e.cfg.Reflector.Enabled = true
	if _, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if string(e.read("alice")) != string(res.Output) {
		t.Error("dry-run output differs from the real condensation")
	}
}

// TestBadInput: invalid agent ids are refused, missing files skipped.
func TestBadInput(t *testing.T) {
	e := newEnv(t, &fakeSum{})
	for _, id := range []string{"", "..", "a/b", "Bad", "x\x00y"} {
		if _, err := e.r.Condense(context.Background(), id, Options{}); err == nil || !strings.Contains(err.Error(), "invalid agent id") {
			t.Errorf("Condense(%q) err = %v", id, err)
		}
	}
	res, err := e.r.Condense(context.Background(), "nobody", Options{Force: true})
	if err != nil || res.Reason != SkipNoFile {
		t.Errorf("missing file: %+v %v", res, err)
	}
}

// cancelStore cancels a context at its k-th call (counting from 1), so a
// mine through it is interrupted at each point it reaches the index.
type cancelStore struct {
	store.Store
	k, n   int
	cancel context.CancelFunc
}

func (s *cancelStore) tick() {
	s.n++
	if s.n == s.k {
		s.cancel()
	}
}

func (s *cancelStore) GetFile(ctx context.Context, src string) (store.File, error) {
	s.tick()
	return s.Store.GetFile(ctx, src)
}

func (s *cancelStore) Files(ctx context.Context, prefix string) ([]store.File, error) {
	s.tick()
	return s.Store.Files(ctx, prefix)
}

func (s *cancelStore) Drawers(ctx context.Context, src string) ([]store.Drawer, error) {
	s.tick()
	return s.Store.Drawers(ctx, src)
}

func (s *cancelStore) Apply(ctx context.Context, u store.FileUpdate) error {
	s.tick()
	return s.Store.Apply(ctx, u)
}

func (s *cancelStore) DeleteFile(ctx context.Context, src string) error {
	s.tick()
	return s.Store.DeleteFile(ctx, src)
}

// timedCancelMiner cancels a context delay after the first mine starts.
type timedCancelMiner struct {
	palace.Miner
	delay  time.Duration
	cancel context.CancelFunc
	once   sync.Once
}

func (m *timedCancelMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	m.once.Do(func() { time.AfterFunc(m.delay, m.cancel) })
	return m.Miner.Mine(ctx, path, opts)
}

// indexDump is an index as one line per drawer and per file record.
func indexDump(t *testing.T, st store.Store) []string {
	t.Helper()
	ctx := context.Background()
	ds, err := st.List(ctx, store.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := st.Files(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("drawer %s %s:%d-%d [%s/%s/%s] %q", d.ID, d.Source, d.LineStart, d.LineEnd, d.Wing, d.Room, d.Agent, d.Text))
	}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("file %s %s/%s %s", f.Source, f.Wing, f.Agent, f.Hash))
	}
	slices.Sort(out)
	return out
}

// TestPassMinesAgainWhatACancelledMineAfterSwapLeft: the mine that follows
// a swap is cancelled at every point it reaches the index, and at random
// moments; the next pass (which condenses nothing) must bring the index
// to what a fresh reindex of the files gives.
func TestPassMinesAgainWhatACancelledMineAfterSwapLeft(t *testing.T) {
	run := func(t *testing.T, k int, delay time.Duration) (calls int) {
		e := newEnv(t, summarize.Extractive{})
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(e.home.PalaceDir(), "palace.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		p, err := palace.New(ctx, e.home, st, nil, palace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.write("alice", memoryFile(40, 1800))
		if _, err := p.Mine(ctx, e.home.HiveDir(), palace.MineOptions{}); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cs := &cancelStore{Store: st, k: k, cancel: cancel}
		cp, err := palace.New(ctx, e.home, cs, nil, palace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.r.miner = cp
		if delay > 0 {
			e.r.miner = &timedCancelMiner{Miner: cp, delay: delay, cancel: cancel}
		}
		res, err := e.r.Condense(cctx, "alice", Options{Force: true})
		if err != nil || res.Status != StatusCondensed {
			t.Fatalf("condense: %+v %v", res, err)
		}
		// The next pass, with nothing to condense and nothing cancelled.
		e.r.miner = p
		results, err := e.r.Pass(ctx)
		if err != nil || len(results) != 1 || results[0].Status != StatusSkipped {
			t.Fatalf("next pass: %+v %v", results, err)
		}
		_, fresh := hometest.FreshPalace(t, e.home, nil, palace.Options{})
		defer fresh.Close()
		if got, want := indexDump(t, st), indexDump(t, fresh); !slices.Equal(got, want) {
			t.Errorf("cancelled at store call %d (after %v; mine error %q): after the next pass the index has %d entries, a fresh reindex %d",
				k, delay, res.MineError, len(got), len(want))
		}
		return cs.n
	}
	calls := run(t, 0, 0) // not cancelled: how many store calls the mines make
	for k := 1; k <= calls; k++ {
		t.Run(fmt.Sprintf("call %d of %d", k, calls), func(t *testing.T) { run(t, k, 0) })
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		delay := time.Duration(1+rng.IntN(3000)) * time.Microsecond
		t.Run(fmt.Sprintf("%d after %v", i, delay), func(t *testing.T) { run(t, -1, delay) })
	}
}

// TestCondenseWritesNothingThroughLinksOutOfTheHome: with memory.md, or
// the backups directory, a symlink to a place outside the home, a
// condensation is refused with the reason and writes nothing there.
func TestCondenseWritesNothingThroughLinksOutOfTheHome(t *testing.T) {
	for _, what := range []string{"memory.md", "backups"} {
		t.Run(what, func(t *testing.T) {
			e := newEnv(t, &fakeSum{})
			outside := t.TempDir()
			orig := memoryFile(20, 1000)
			p := e.path("alice")
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			switch what {
			case "memory.md":
				target := filepath.Join(outside, "memory.md")
				must(t, os.WriteFile(target, orig, 0o644))
				must(t, os.Symlink(target, p))
			case "backups":
				must(t, os.WriteFile(p, orig, 0o644))
				must(t, os.RemoveAll(e.home.BackupsDir()))
				must(t, os.Symlink(outside, e.home.BackupsDir()))
			}
			_, err := e.r.Condense(context.Background(), "alice", Options{Force: true})
			if err == nil || !strings.Contains(err.Error(), "a symlink leads out of the home") {
				t.Fatalf("condense: %v, want a refusal naming the link out of the home", err)
			}
			if data, _ := os.ReadFile(p); string(data) != string(orig) {
				t.Error("the memory file changed")
			}
			ents, _ := os.ReadDir(outside)
			for _, en := range ents {
				if en.Name() != "memory.md" {
					t.Errorf("written outside the home: %s", en.Name())
				}
			}
		})
	}
}

// TestCondensedEndsWithOneArchivePointer: whatever the summariser writes —
// the extractive one, or an LLM that leaves out the pointer, writes it in
// the middle or names another directory — the condensed region ends with
// exactly one line saying where the full text is, condensation after
// condensation.
func TestCondensedEndsWithOneArchivePointer(t *testing.T) {
	const pointer = "Full text of evicted sections: hive/archive/alice/"
	for _, tc := range []struct {
		name string
		sum  summarize.Summarizer
	}{
		{"extractive", summarize.Extractive{}},
		{"no pointer", &fakeSum{}},
		{"pointer of its own", &fakeSum{fn: func(ctx context.Context, req summarize.Request) (summarize.Result, error) {
			return summarize.Result{Condensed: "- first\nFull text of evicted sections: hive/archive/bob/\n- second"}, nil
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.sum)
			e.write("alice", memoryFile(40, 1500))
			for round := range 3 {
				if _, err := e.r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				cond := mustParse(t, e.read("alice")).Condensed()
				lines := strings.Split(strings.TrimSpace(cond), "\n")
				if lines[len(lines)-1] != pointer || strings.Count(cond, "Full text of evicted sections:") != 1 {
					t.Fatalf("round %d: condensed region does not end with the one pointer line:\n%s", round, cond)
				}
				e.now = e.now.Add(time.Second)
				f := string(e.read("alice"))
				for i := range 20 {
					f += sectionText(100*(round+1)+i, 1500)
				}
				e.write("alice", []byte(f))
			}
		})
	}
}
