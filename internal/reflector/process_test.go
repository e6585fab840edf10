package reflector

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/summarize"
)

// helperEnv switches the test binary into a helper process: "append" (an
// agent appending sections) or "condense" (a condensation to be killed).
const helperEnv = "HIVEMEM_REFLECTOR_TEST_HELPER"

func TestMain(m *testing.M) {
	filetest.ChildMain(m, helperEnv, map[string]func() error{
		"append":   helperAppend,
		"condense": helperCondense,
	})
}

// helperAppend appends HELPER_COUNT sections to HELPER_PATH the way an
// agent does: open with O_APPEND, one write, close; no lock.
func helperAppend() error {
	path := os.Getenv("HELPER_PATH")
	n, _ := strconv.Atoi(os.Getenv("HELPER_COUNT"))
	pad := strings.Repeat("appended filler text to make the section worth evicting. ", 10)
	for i := range n {
		sec := fmt.Sprintf("## 2026-12-01 — appended %d\nAPPEND-MARKER-%05d\n%s\n", i, i, pad)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(sec); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		time.Sleep(time.Duration(i%3) * time.Millisecond)
	}
	return nil
}

// helperCondense condenses agent alice under HELPER_HOME with a slow
// summariser, announcing "ready" just before it starts, so the parent can
// kill it at a chosen point.
func helperCondense() error {
	h := home.Home{Root: os.Getenv("HELPER_HOME")}
	r := New(Deps{Home: h, Summarizer: slowSum{inner: &fakeSum{}, delay: 10 * time.Millisecond}})
	fmt.Println("ready")
	if _, err := r.Condense(context.Background(), "alice", Options{Force: true}); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}

// helperCmd runs this test binary as the helper mode, its stderr the test's.
func helperCmd(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := filetest.ChildCommand(t, helperEnv, mode, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// outcomes counts the results of condensations run while others write.
type outcomes struct {
	condensed, carried, aborted int
	reasons, skips              map[string]int // why they aborted, or were skipped
}

// add counts one result and returns its status.
func (o *outcomes) add(res Result, _ error) string {
	if o.reasons == nil {
		o.reasons, o.skips = map[string]int{}, map[string]int{}
	}
	switch res.Status {
	case StatusCondensed:
		o.condensed++
		if res.AppendedBytes > 0 || res.SalvagedBytes > 0 {
			o.carried++
		}
	case StatusAborted:
		o.aborted++
		o.reasons[res.Reason]++
	default:
		o.skips[res.Reason]++
	}
	return res.Status
}

// checkReasons fails on an abort for another reason than a change during
// the condensation or nothing to gain.
func (o *outcomes) checkReasons(t *testing.T) {
	t.Helper()
	for r := range o.reasons {
		if r != ReasonChanged && r != ReasonNotSmaller {
			t.Errorf("unexpected abort reason %s", r)
		}
	}
}

// aliceHome makes a home whose agent alice has data as its memory file,
// and returns it with the file's path.
func aliceHome(t *testing.T, data []byte) (home.Home, string) {
	t.Helper()
	h := hometest.New(t)
	return h, hometest.WriteMemory(t, h, "alice", string(data))
}

// startCondenser starts a helper process that condenses alice in h and
// waits for its "ready"; it returns the process and what the helper writes
// after "ready".
func startCondenser(t *testing.T, h home.Home) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := helperCmd(t, "condense", "HELPER_HOME="+h.Root)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	rd := bufio.NewReader(out)
	if line, err := rd.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	return cmd, rd
}

// TestRaceWithAppendingProcess proves the compare-and-swap: a second
// process keeps appending sections (as agents do: O_APPEND, no lock) while
// condensations with a slow summariser run round after round; afterwards
// every appended line is in the memory file or the archive.
func TestRaceWithAppendingProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	const appends = 1200
	e := newEnv(t, slowSum{inner: &fakeSum{}, delay: 20 * time.Millisecond})
	e.r.salvageGrace = DefaultSalvageGrace
	e.r.lockTimeout = 5 * time.Second
	e.cfg.Reflector.RecentKeep = 4
	e.write("alice", memoryFile(20, 1000))

	cmd := helperCmd(t, "append", "HELPER_PATH="+e.path("alice"), "HELPER_COUNT="+strconv.Itoa(appends))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	ctx := context.Background()
	var out outcomes
	var waitErr error
	deadline := time.Now().Add(time.Minute)
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("appender never finished")
		}
		if out.add(e.r.Condense(ctx, "alice", Options{Force: true})) == StatusSkipped {
			time.Sleep(time.Millisecond) // nothing new to evict yet
		}
	}
	if waitErr != nil {
		t.Fatalf("appender: %v", waitErr)
	}
	all := string(e.read("alice")) + e.archiveText("alice")
	lost := 0
	for i := range appends {
		if !strings.Contains(all, fmt.Sprintf("APPEND-MARKER-%05d\n", i)) {
			lost++
			if lost <= 5 {
				t.Errorf("appended line %d lost", i)
			}
		}
	}
	for i := range 20 {
		if !strings.Contains(all, fmt.Sprintf("marker-%04d\n", i)) {
			t.Errorf("original section %d lost", i)
		}
	}
	t.Logf("%d condensations (%d carried appends), %d aborts %v, %d lines lost", out.condensed, out.carried, out.aborted, out.reasons, lost)
	if out.condensed < 5 || out.carried == 0 {
		t.Errorf("the race was not exercised: %d condensations, %d with carried appends", out.condensed, out.carried)
	}
	out.checkReasons(t)
	// The memory file is a well-formed condensed file.
	nf := mustParse(t, e.read("alice"))
	if _, chk := verifyRegions(nf); chk != nil {
		t.Errorf("final file: %s", chk.msg)
	}
}

// verifyRegions checks only the region structure of a file.
func verifyRegions(nf *memfile.File) (*memfile.File, *check) {
	p := plan{file: nf, kept: nf.Recent()}
	out := nf.Render()
	return verify(verifyInput{plan: p, out: out, oldSize: len(out) * 2})
}

// TestCrashSafety kills a condensing process (SIGKILL) at varied points and
// checks the file is always either the original bytes or a verified
// condensed file, never a mix, and that nothing it leaves behind would be
// mined as notes.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	orig, p := killedFile(t)
	outcomes := map[string]int{}
	// The first run is not killed: it measures how long a condensation
	// takes, so the kills can be spread over all of it.
	var full time.Duration
	kills := 24
	if raceEnabled {
		kills = 8
	}
	for i := -1; i < kills; i++ {
		delay := time.Duration(-1)
		if i >= 0 {
			delay = full * time.Duration(i) * 11 / 10 / time.Duration(kills)
		}
		h, path := aliceHome(t, orig)
		cmd, rd := startCondenser(t, h)
		if delay < 0 {
			start := time.Now()
			line, err := rd.ReadString('\n')
			full = time.Since(start)
			if werr := cmd.Wait(); werr != nil || line != "done\n" {
				t.Fatalf("unkilled condensation failed: %q %v %v", line, err, werr)
			}
		} else {
			time.Sleep(delay)
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}

		if _, _, condensed := checkKilled(t, h, path, orig, p, fmt.Sprintf("delay %s", delay)); condensed {
			outcomes["condensed"]++
		} else {
			outcomes["original"]++
		}
		checkNoMinableLeftovers(t, h, delay)
	}
	t.Logf("a condensation takes %s; outcomes of %d kills and 1 full run: %v", full, kills, outcomes)
	if outcomes["original"] == 0 || outcomes["condensed"] == 0 {
		t.Errorf("kills did not cover both sides of the swap: %v", outcomes)
	}
}

// killedFile is the memory file the kill tests condense, and the plan of
// its condensation: the oldest 28 of its 40 sections evicted.
func killedFile(t *testing.T) ([]byte, plan) {
	t.Helper()
	orig := memoryFile(40, 1800)
	of := mustParse(t, orig)
	return orig, plan{file: of, evicted: of.Recent()[:28], kept: of.Recent()[28:]}
}

// checkKilled reads alice's memory file (at path) and archive in h after a
// condensation of orig by plan p was killed, and fails unless the file is
// orig or a verified condensation of it; what says which kill it was. It
// returns the file, the archive and whether the file is condensed.
func checkKilled(t *testing.T, h home.Home, path string, orig []byte, p plan, what string) (got []byte, arch [][]byte, condensed bool) {
	t.Helper()
	got, err := os.ReadFile(path)
	must(t, err)
	arch, err = (&Reflector{home: h}).readArchive("alice")
	must(t, err)
	if bytes.Equal(got, orig) {
		return got, arch, false
	}
	if _, chk := verify(verifyInput{plan: p, out: got, oldSize: len(orig), archive: arch}); chk != nil {
		t.Fatalf("%s: file is neither the original nor a verified condensation: %s: %s", what, chk.reason, chk.msg)
	}
	return got, arch, true
}

var archiveNameRE = regexp.MustCompile(`^\d{4}-\d{2}\.md$`)

// checkNoMinableLeftovers walks hive/ (minus backups, which are never
// mined) and fails on any file the miner would pick up that is not a
// memory file or a whole archive file; temp files must be dot-files.
func checkNoMinableLeftovers(t *testing.T, h home.Home, delay time.Duration) {
	t.Helper()
	err := filepath.WalkDir(h.HiveDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == h.BackupsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasPrefix(name, "."):
			// A kept replaced file (a kill right after the swap) is not
			// mined; the next locked access carries and removes it. The
			// condense and archive locks stay, as every lock file does.
			if !atomicio.IsTempName(name) && !atomicio.IsKeptName(name) && !strings.HasSuffix(name, atomicio.LockSuffix) {
				t.Errorf("delay %s: unexpected hidden file %s", delay, path)
			}
		case name == "memory.md" || name == "memory.md.lock" || name == "log.jsonl" || strings.HasSuffix(name, ".lock"):
		case archiveNameRE.MatchString(name):
			data, err := os.ReadFile(path)
			must(t, err)
			af, err := memfile.Parse(data)
			if err != nil || !strings.HasPrefix(af.Header, "# Archive — alice\n") || len(af.Recent()) != 28 {
				t.Errorf("delay %s: archive %s is not whole (%v)", delay, path, err)
			}
		default:
			t.Errorf("delay %s: stray file %s would be mined", delay, path)
		}
		return nil
	})
	must(t, err)
}

// BenchmarkCondense128K measures the non-LLM part of condensing a 128 KiB
// file: read, plan, archive, build, verify, backup, atomic write (fsyncs
// included), with a no-op summariser and with the extractive one. The
// salvage grace (a deliberate wait for late appends) is excluded.
func BenchmarkCondense128K(b *testing.B) {
	data := memoryFile(80, 1600)
	for len(data) < 128<<10 {
		data = append(data, sectionText(len(data), 1600)...)
	}
	for _, c := range []struct {
		name string
		sum  summarize.Summarizer
	}{{"noop", &fakeSum{}}, {"extractive", summarize.Extractive{}}} {
		b.Run(c.name, func(b *testing.B) {
			h := home.Home{Root: b.TempDir()}
			if err := h.Init(); err != nil {
				b.Fatal(err)
			}
			r := New(Deps{Home: h, Summarizer: c.sum, SalvageGrace: -1, Settings: config.Default})
			path, _ := h.MemoryPath("alice")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				b.StopTimer()
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.RemoveAll(h.ArchiveRoot()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := r.Condense(context.Background(), "alice", Options{Force: true})
				if err != nil || res.Status != StatusCondensed {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// BenchmarkPlanVerify128K is the CPU part alone: parse, plan, build and
// verify a 128 KiB file, no I/O, no summariser.
func BenchmarkPlanVerify128K(b *testing.B) {
	data := memoryFile(80, 1600)
	for len(data) < 128<<10 {
		data = append(data, sectionText(len(data), 1600)...)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := memfile.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		p := newPlan(f, 12)
		out := p.build("- condensed", nil)
		if _, chk := verify(verifyInput{plan: p, out: out, oldSize: len(data)}); chk != nil {
			b.Fatal(chk.msg)
		}
	}
}
