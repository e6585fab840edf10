package cli

// Process-level no-loss tests: real hivemem processes (this test binary
// re-executed in child mode, running Main) write one agent's memory file
// while a shell appends to it with `>>` and no lock, as agents do, and
// while other processes condense it or are killed mid-write. Whatever the
// interleaving, every line anybody wrote must end up exactly once in the
// memory file or its archive.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hometest/testenv"
	"github.com/hivemem/hivemem/internal/memfile"
)

// procChildEnv switches the test binary into a child process that runs
// Main with the arguments after "--" and exits with its status.
const procChildEnv = "HIVEMEM_CLI_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(procChildEnv) == "main" {
		os.Exit(procChildMain())
	}
	testenv.Clear() // a child keeps what its parent gave it
	os.Exit(m.Run())
}

func procChildMain() int {
	for i, a := range os.Args {
		if a == "--" {
			return Main(context.Background(), os.Args[i+1:], os.Stdin, os.Stdout, os.Stderr)
		}
	}
	fmt.Fprintln(os.Stderr, "child: no -- before the hivemem arguments")
	return 2
}

// procHome is an initialised, lexical-only home whose commands run as
// child processes.
type procHome struct {
	root    string
	exe     string
	env     []string // the children's environment
	mem     string   // alice's memory.md
	agent   string   // alice's directory
	archive string   // alice's archive directory
}

// newProcHome makes the home and sets vars (KEY=VALUE) both for the
// children and for in-process Main calls. It skips when there is no sh.
func newProcHome(t *testing.T, vars ...string) *procHome {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("these tests append with sh:", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := &procHome{root: filepath.Join(dir, "home"), exe: exe}
	vars = append([]string{
		"HIVEMEM_MODEL_DIR=" + filepath.Join(dir, "no-model"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg"),
		"HIVEMEM_SUMMARIZER_PROVIDER=extractive",
	}, vars...)
	// The children see only these hivemem settings, whatever the test
	// process was started with.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HIVEMEM_") && !strings.HasPrefix(kv, "MEMPALACE_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			h.env = append(h.env, kv)
		}
	}
	h.env = append(h.env, vars...)
	h.env = append(h.env, procChildEnv+"=main")
	t.Setenv("HIVEMEM_HOME", "")
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"--home", h.root, "init"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut.String())
	}
	hm := home.Home{Root: h.root}
	h.mem, _ = hm.MemoryPath("alice")
	h.agent, _ = hm.AgentDir("alice")
	h.archive, _ = hm.ArchiveDir("alice")
	return h
}

// cmd is `hivemem --home <root> args...` as a child process.
func (h *procHome) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(h.exe, append([]string{"-test.run=^$", "--", "--home", h.root}, args...)...)
	cmd.Env = h.env
	cmd.Stdin = strings.NewReader("")
	return cmd
}

// run runs a child to the end and returns its exit code and output.
func (h *procHome) run(args ...string) (int, string, string) {
	cmd := h.cmd(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String() + "\n" + err.Error()
	default:
		return -1, out.String(), errOut.String() + "\n" + err.Error()
	}
}

// appender is a shell that appends count unique lines "<tag>-NNN: …" to
// the memory file, one `printf >>` each (open, write, close; no lock),
// pausing pause between them.
func (h *procHome) appender(tag string, count int, pause string) *exec.Cmd {
	script := `i=0
while [ "$i" -lt "$COUNT" ]; do
	printf '%s-%03d: a line the agent appended with the shell, holding no lock\n' "$TAG" "$i" >> "$FILE" || exit 1
	i=$((i + 1))
	sleep "$PAUSE"
done`
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "FILE="+h.mem, "TAG="+tag, "COUNT="+strconv.Itoa(count), "PAUSE="+pause)
	return cmd
}

func appendedLine(tag string, i int) string { return fmt.Sprintf("%s-%03d: ", tag, i) }

// verbatim is everything that holds what was written word for word:
// memory.md without its pinned and condensed regions (summaries, which may
// copy a line), and every archive file. It fails the test if memory.md
// does not parse.
func (h *procHome) verbatim(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(h.mem)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfile.Parse(data)
	if err != nil {
		t.Fatalf("memory.md does not parse: %v", err)
	}
	var b strings.Builder
	b.WriteString(f.Header)
	for _, s := range f.Sections {
		if s.Kind != memfile.KindPinned && s.Kind != memfile.KindCondensed {
			b.WriteString(s.Raw)
		}
	}
	ents, err := os.ReadDir(h.archive)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		a, err := os.ReadFile(filepath.Join(h.archive, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("\x00") // no marker spans two files
		b.Write(a)
	}
	return b.String()
}

// hidden lists the hidden files in alice's directory whose names end in
// suffix.
func (h *procHome) hidden(t *testing.T, suffix string) []string {
	t.Helper()
	ents, err := os.ReadDir(h.agent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// raceBuild reports whether this test binary runs under the race
// detector, which makes each child process take seconds to start.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// procNote is the text of a remembered note; the marker is its first
// word, and the heading is passed separately so that the marker appears
// once per note. The filler gives condensation something to shrink.
func procNote(marker string) string {
	return marker + ": this note was remembered by a separate hivemem process while others " +
		"appended to the same memory file and condensed it; the rest of the line is filler " +
		"so that evicting the section makes the file smaller, and every word must survive."
}

// TestProcessesRememberAppendReflect: four processes each remember six
// notes, one after the other, while a shell appends thirty lines with `>>`
// and reflect --now condenses the file again and again in further
// processes. Afterwards every note and every appended line is in memory.md
// or the archive exactly once, the file parses, and condensation happened.
func TestProcessesRememberAppendReflect(t *testing.T) {
	h := newProcHome(t,
		"HIVEMEM_REFLECTOR_MIN_BYTES=512",
		"HIVEMEM_REFLECTOR_BUDGET_BYTES=2048",
		"HIVEMEM_REFLECTOR_SECTION_TRIGGER=6",
		"HIVEMEM_REFLECTOR_RECENT_KEEP=3",
		"HIVEMEM_REFLECTOR_WORD_BUDGET=60",
	)
	// A first section, so that the shell's lines never land under the
	// "## Recent" marker itself.
	if code, _, errOut := h.run("remember", "alice", procNote("SEED-0"), "--heading", "seed"); code != 0 {
		t.Fatalf("seed remember: exit %d: %s", code, errOut)
	}

	const workers, rounds, appends = 4, 6, 30
	var writers sync.WaitGroup
	for w := range workers {
		writers.Go(func() {
			for r := range rounds {
				marker := fmt.Sprintf("NOTE-w%d-r%d", w, r)
				code, out, errOut := h.run("remember", "alice", procNote(marker), "--heading", fmt.Sprintf("worker %d", w))
				if code != 0 || !strings.Contains(out, "remembered") {
					t.Errorf("remember %s: exit %d: %s %s", marker, code, out, errOut)
				}
			}
		})
	}
	writers.Go(func() {
		if out, err := h.appender("APPEND", appends, "0.01").CombinedOutput(); err != nil {
			t.Errorf("appender: %v: %s", err, out)
		}
	})

	// Condense over and over until the writers are done.
	stop := make(chan struct{})
	statuses := map[string]int{}
	reflectDone := make(chan struct{})
	go func() {
		defer close(reflectDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			reflectOnce(t, h, statuses)
			time.Sleep(10 * time.Millisecond) // pacing only
		}
	}()
	writers.Wait()
	close(stop)
	<-reflectDone
	// Once more with everything written: the outcome must not depend on
	// whether the loop above got to condense.
	reflectOnce(t, h, statuses)
	t.Logf("reflect results: %v", statuses)

	all := h.verbatim(t)
	var markers []string
	markers = append(markers, "SEED-0: ")
	for w := range workers {
		for r := range rounds {
			markers = append(markers, fmt.Sprintf("NOTE-w%d-r%d: ", w, r))
		}
	}
	for i := range appends {
		markers = append(markers, appendedLine("APPEND", i))
	}
	for _, m := range markers {
		if n := strings.Count(all, m); n != 1 {
			t.Errorf("%q is in memory.md and the archive %d times, want once", strings.TrimSuffix(m, ": "), n)
		}
	}
	arch := all[strings.IndexByte(all+"\x00", 0):]
	if !strings.Contains(arch, "NOTE-") && !strings.Contains(arch, "SEED-") {
		t.Errorf("nothing was condensed: the archive holds no note (reflect results %v)", statuses)
	}
	if kept := h.hidden(t, ".swapped"); len(kept) > 0 {
		t.Logf("kept replaced files still present (carried by the next locked access): %v", kept)
	}
	if t.Failed() {
		data, _ := os.ReadFile(h.mem)
		t.Logf("memory.md:\n%s", data)
	}
}

// reflectOnce runs `reflect --now alice --json` in a child and tallies the
// statuses. An abort (exit 1, e.g. the file changed during the summary) is
// a legitimate outcome; anything else that fails is an error.
func reflectOnce(t *testing.T, h *procHome, statuses map[string]int) {
	code, out, errOut := h.run("reflect", "--now", "alice", "--json")
	var res []struct{ Status, Reason string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
		t.Errorf("reflect: exit %d, unreadable output %q: %s", code, out, errOut)
		return
	}
	key := res[0].Status
	if res[0].Reason != "" {
		key += "/" + res[0].Reason
	}
	statuses[key]++
	if code != 0 && res[0].Status != "aborted" {
		t.Errorf("reflect: exit %d, status %s: %s", code, key, errOut)
	}
}

// TestRememberKilledDuringWrite: remember processes are SIGKILLed at
// random moments (seeded) while a shell appends lines with `>>`; after
// each kill one normal remember runs, which carries what the killed one
// left behind. At the end every appended line is in memory.md, every note
// whose process exited 0 exactly once, a killed process's note at most
// once, and after a final remember no kept replaced file (".swapped")
// remains.
func TestRememberKilledDuringWrite(t *testing.T) {
	h := newProcHome(t)
	seed := uint64(20261129)
	if s := os.Getenv("HIVEMEM_TEST_KILL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("HIVEMEM_TEST_KILL_SEED: %v", err)
		}
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	// life is how long the last unkilled remember process lived; the kills
	// are spread over 0 to 1.5 times that, so that some land before the
	// write, some in it, some in the salvage after it, and some not at all.
	var life time.Duration
	mustRemember := func(marker string) {
		t.Helper()
		start := time.Now()
		if code, out, errOut := h.run("remember", "alice", procNote(marker), "--heading", "note"); code != 0 || !strings.Contains(out, "remembered") {
			t.Fatalf("remember %s: exit %d: %s %s", marker, code, out, errOut)
		}
		life = time.Since(start)
	}
	// The seed note gives the shell's lines a section to land in.
	mustRemember("SEED-0")

	const appends = 300
	kills := 20
	if raceBuild() {
		kills = 4 // every child starts slowly under the race detector
	}
	app := h.appender("LINE", appends, "0.005")
	var appOut bytes.Buffer
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	appDone := make(chan error, 1)
	go func() { appDone <- app.Wait() }()

	mustHave := []string{"SEED-0"} // notes whose process exited 0
	var killed []string
	leftKept := 0
	for i := range kills {
		marker := fmt.Sprintf("KILL-%02d", i)
		cmd := h.cmd("remember", "alice", procNote(marker), "--heading", "note")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(life) * 3 / 2)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		switch {
		case err == nil:
			if !strings.Contains(out.String(), "remembered") {
				t.Errorf("%s exited 0 without remembering: %s %s", marker, out.String(), errOut.String())
			}
			mustHave = append(mustHave, marker)
		case cmd.ProcessState != nil && !cmd.ProcessState.Exited():
			killed = append(killed, marker)
		default:
			t.Errorf("%s failed on its own: %v: %s", marker, err, errOut.String())
		}
		if len(h.hidden(t, ".swapped")) > 0 {
			leftKept++
		}
		// The next writer recovers whatever the killed one left.
		after := fmt.Sprintf("AFTER-%02d", i)
		mustRemember(after)
		mustHave = append(mustHave, after)
	}
	if err := <-appDone; err != nil {
		t.Errorf("appender: %v: %s", err, appOut.String())
	}
	mustRemember("FINAL-0")
	mustHave = append(mustHave, "FINAL-0")
	t.Logf("seed %d, a remember lives about %s; %d of %d killed (%d left a kept file behind)", seed, life.Round(time.Millisecond), len(killed), kills, leftKept)

	all := h.verbatim(t)
	for _, m := range mustHave {
		if n := strings.Count(all, m+": "); n != 1 {
			t.Errorf("note %s (its process exited 0) is in memory.md %d times, want once", m, n)
		}
	}
	for _, m := range killed {
		if n := strings.Count(all, m+": "); n > 1 {
			t.Errorf("note %s (its process was killed) is in memory.md %d times, want at most once", m, n)
		}
	}
	lost, doubled := 0, 0
	for i := range appends {
		switch n := strings.Count(all, appendedLine("LINE", i)); {
		case n == 0:
			lost++
			t.Errorf("appended line %d is lost", i)
		case n > 1:
			// A kill between Swap's carrying append and the rename of
			// the kept file that records it (one fsync) leaves the line
			// to be carried again by the next Recover: atomicio accepts
			// that (never lost; see renameKept). Logged, not failed, so
			// this test's outcome does not depend on where the random
			// kills land; TestRememberKilledWhileCarryingAppend checks
			// that a kill after the record carries nothing twice.
			doubled++
			t.Logf("appended line %d is in memory.md %d times (a kill inside the carry)", i, n)
		}
	}
	if kept := h.hidden(t, ".swapped"); len(kept) > 0 {
		sort.Strings(kept)
		t.Errorf("kept replaced files remain after a final remember: %v", kept)
	}
	if t.Failed() {
		data, _ := os.ReadFile(h.mem)
		t.Logf("%d appended lines lost, %d doubled; memory.md:\n%s", lost, doubled, data)
	}
}

// TestRememberKilledWhileCarryingAppend: an agent holds memory.md open for
// appending (a shell's `exec 3>>`) across a remember and writes a line
// into the replaced file after the swap. The remember process, which keeps
// watching the replaced file while anybody holds it, carries the line into
// the new file, records in the kept file's name that it did, and is then
// SIGKILLed; the agent writes a second line into the same descriptor. The
// next remember recovers from the kept file. Both lines must be in
// memory.md exactly once: the first not carried again, the second not
// lost. Each step waits for the previous one to show in the files, not
// for time to pass.
//
// The kill comes only once the kept file's name records the carry: a kill
// between the carrying append and that rename (a window of one fsync) may
// carry the line twice, which atomicio accepts (never lost, see
// renameKept); TestRememberKilledDuringWrite logs such doubles.
func TestRememberKilledWhileCarryingAppend(t *testing.T) {
	h := newProcHome(t)
	if code, _, errOut := h.run("remember", "alice", procNote("SEED-0"), "--heading", "seed"); code != 0 {
		t.Fatalf("seed remember: exit %d: %s", code, errOut)
	}
	st, err := os.Stat(h.mem)
	if err != nil {
		t.Fatal(err)
	}
	off := st.Size() // what the remember reads, and its kept file's first offset
	const line1 = "HELD-001: written through a descriptor opened before the swap"
	const line2 = "HELD-002: written through it after the writer was killed"

	// The agent: open for append and say so; then on each line of stdin,
	// write the next line and say so; then close.
	holder := exec.Command("sh", "-c", `exec 3>>"$FILE" || exit 1
echo open
read _ || exit 1
printf '%s\n' "$LINE1" >&3 || exit 1
echo written
read _ || exit 1
printf '%s\n' "$LINE2" >&3 || exit 1
echo written
read _ || exit 1
exec 3>&-
echo closed`)
	holder.Env = append(os.Environ(), "FILE="+h.mem, "LINE1="+line1, "LINE2="+line2)
	holderIn, said := filetest.StartPiped(t, holder)
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	step := func(want string) {
		t.Helper()
		if want != "open" {
			if _, err := io.WriteString(holderIn, "\n"); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := said.ReadString('\n'); got != want+"\n" {
			t.Fatalf("holder said %q (%v), want %q", got, err, want)
		}
	}
	step("open")

	cmd := h.cmd("remember", "alice", procNote("KILL-00"), "--heading", "note")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The note in memory.md means the swap is done; the remember process
	// now watches the replaced file, which the holder keeps open.
	h.waitFor(t, "the note swapped in", func() bool { return strings.Contains(h.read(), "KILL-00: ") })
	step("written")
	carried := off + int64(len(line1)) + 1
	h.waitFor(t, "the first line carried and recorded", func() bool {
		return strings.Contains(h.read(), line1) && slices.Contains(h.keptOffsets(t), carried)
	})
	_ = cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Logf("the remember process finished before the kill (it stops watching after %s): %s", atomicio.SalvageMaxWait, out.String())
	}
	step("written")
	step("closed")

	if code, _, errOut := h.run("remember", "alice", procNote("AFTER-00"), "--heading", "note"); code != 0 {
		t.Fatalf("remember after the kill: exit %d: %s", code, errOut)
	}
	all := h.verbatim(t)
	for _, m := range []string{line1, line2, "SEED-0: ", "KILL-00: ", "AFTER-00: "} {
		if n := strings.Count(all, m); n != 1 {
			t.Errorf("%q is in memory.md %d times, want once", strings.TrimSuffix(m, ": "), n)
		}
	}
	if kept := h.hidden(t, ".swapped"); len(kept) > 0 {
		t.Errorf("kept replaced files remain: %v", kept)
	}
	if t.Failed() {
		t.Logf("memory.md:\n%s", h.read())
	}
}

// read returns memory.md, or "" if it cannot be read.
func (h *procHome) read() string {
	data, _ := os.ReadFile(h.mem)
	return string(data)
}

// keptOffsets lists the offsets recorded in the names of alice's kept
// replaced files (".memory.md.<offset>.<random>.swapped").
func (h *procHome) keptOffsets(t *testing.T) []int64 {
	t.Helper()
	var offs []int64
	for _, name := range h.hidden(t, ".swapped") {
		parts := strings.Split(strings.TrimPrefix(name, ".memory.md."), ".")
		if n, err := strconv.ParseInt(parts[0], 10, 64); err == nil {
			offs = append(offs, n)
		}
	}
	return offs
}

// waitFor polls until cond holds. The deadline only keeps a broken build
// from hanging the test; no outcome depends on it.
func (h *procHome) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s; memory.md:\n%s\nkept files: %v", what, h.read(), h.hidden(t, ".swapped"))
		}
		time.Sleep(time.Millisecond)
	}
}
