package manager

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/wiring"
)

// TestManagerLogsASkipOnce: a file that stays skipped across scans is one
// log warning, at the scan that first finds it; a new reason is logged
// again, and a file mined again is logged once as no longer skipped; a
// mine of the file alone (what the watcher starts) is told of the skips
// the scans logged. The status lists the skip at every mine all the same.
func TestManagerLogsASkipOnce(t *testing.T) {
	var log strings.Builder // the mines below run on this goroutine alone
	a := openHomeLogging(t, slog.New(slog.NewTextHandler(&log, nil)), "", map[string]string{"good": goodFile})
	h := a.Home()
	m, err := New(Options{App: a, HTTP: HTTPOff})
	if err != nil {
		t.Fatal(err)
	}
	path, err := h.MemoryPath("broken")
	if err != nil {
		t.Fatal(err)
	}
	const binary, invalid = "binary file", "not valid UTF-8"
	steps := []struct {
		name, content string
		skipped       string // the reason in the status ("": not skipped)
		logged        string // the reason logged by this scan ("": none)
		noLonger      bool   // the scan logs the file as no longer skipped
		alone         bool   // mine the file alone, as a change to it does, not a scan
	}{
		{"binary, first scan", "# Memory\x00 binary\x00", binary, binary, false, false},
		{"binary, second scan", "# Memory\x00 binary\x00", binary, "", false, false},
		{"binary, third scan", "# Memory\x00 binary\x00", binary, "", false, false},
		{"invalid UTF-8", "# Memory \xff\xfe\n", invalid, invalid, false, false},
		{"invalid UTF-8 again", "# Memory \xff\xfe\n", invalid, "", false, false},
		{"mined", "# Memory — broken (broken)\n\n## 2026-11-01 — fixed\nplain text now\n", "", "", true, false},
		{"mined again", "# Memory — broken (broken)\n\n## 2026-11-01 — fixed\nplain text now\n", "", "", false, false},
		{"binary once more", "# Memory\x00 binary\x00", binary, binary, false, false},
		{"binary, the file mined alone", "# Memory\x00 binary\x00", binary, "", false, true},
		{"mined, the file alone", "# Memory — broken (broken)\n\n## 2026-11-02 — fixed\nplain text\n", "", "", true, true},
	}
	for _, st := range steps {
		hometest.WriteMemory(t, h, "broken", st.content)
		log.Reset()
		if st.alone {
			m.mineAgent(t.Context(), "broken", time.Now(), false)
		} else {
			m.scan(t.Context(), make(chan struct{}))
		}
		var warned []string
		noLonger := 0
		for l := range strings.Lines(log.String()) {
			if !strings.Contains(l, "path="+path) {
				continue
			}
			switch {
			case strings.Contains(l, "no longer skipping"):
				noLonger++
			case strings.Contains(l, "skipping"):
				warned = append(warned, l)
			}
		}
		switch {
		case st.logged == "" && len(warned) != 0:
			t.Errorf("%s: the skip was logged again:\n%s", st.name, log.String())
		case st.logged != "" && (len(warned) != 1 || !strings.Contains(warned[0], st.logged)):
			t.Errorf("%s: want one warning with %q, got %d:\n%s", st.name, st.logged, len(warned), log.String())
		}
		if want := map[bool]int{true: 1}[st.noLonger]; noLonger != want {
			t.Errorf("%s: logged %d times as no longer skipped, want %d:\n%s", st.name, noLonger, want, log.String())
		}
		got := agentStatus(m.Status(t.Context()), "broken").Skipped
		if st.skipped == "" && got != "" || !strings.Contains(got, st.skipped) {
			t.Errorf("%s: status says skipped %q, want %q", st.name, got, st.skipped)
		}
	}
}

// TestAppMinesLogASkipOnce: under the manager, the app's own mines (the
// one after a remember or a forget, from the HTTP API or MCP) of a file
// that stays skipped log it once, as the manager's scans do, not at every
// request; the file mined again is logged once as no longer skipped.
func TestAppMinesLogASkipOnce(t *testing.T) {
	var log strings.Builder // the calls below run on this goroutine alone
	big := "# Memory — big (big)\n\n## 2026-11-01 — old\n" + strings.Repeat("a long line of old notes\n", 40)
	a := openHomeLogging(t, slog.New(slog.NewTextHandler(&log, nil)), "[palace]\nmax_file_bytes = 1000\n", map[string]string{"big": big})
	if _, err := New(Options{App: a, HTTP: HTTPOff}); err != nil {
		t.Fatal(err)
	}
	path, err := a.Home().MemoryPath("big")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 3 {
		if _, err := a.Remember(ctx, app.RememberRequest{Agent: "big", Text: fmt.Sprintf("note %d", i), Force: true}); err != nil {
			t.Fatalf("remember %d: %v", i, err)
		}
	}
	if _, err := a.Forget(ctx, app.ForgetRequest{Agent: "big", Heading: "note 1"}); err != nil {
		t.Fatalf("forget: %v", err)
	}
	count := func(what string) int {
		n := 0
		for l := range strings.Lines(log.String()) {
			if strings.Contains(l, "path="+path) && strings.Contains(l, what) {
				n++
			}
		}
		return n
	}
	if n := count("msg=\"mine: skipping file\""); n != 1 {
		t.Errorf("the skip of a file too large was logged %d times over three remembers and a forget, want once:\n%s", n, log.String())
	}
	// Forgetting the old section brings the file under the cap: mined again.
	if _, err := a.Forget(ctx, app.ForgetRequest{Agent: "big", Heading: "old"}); err != nil {
		t.Fatalf("forget old: %v", err)
	}
	if n := count("no longer skipping"); n != 1 {
		t.Errorf("the file mined again was logged %d times as no longer skipped, want once:\n%s", n, log.String())
	}
}

// TestRunStartEmbedsDrawersMinedWithoutTheModel: a home mined while no
// model was installed has drawers without vectors; the first `run` with
// the model embeds them at its start, though no file changed.
func TestRunStartEmbedsDrawersMinedWithoutTheModel(t *testing.T) {
	model := modelfetch.DefaultDir()
	if !wiring.ModelInstalled(model) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MiniLM model not installed in %s (CI must run `hivemem model fetch`)", model)
		}
		t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", model)
	}
	lexical := openHome(t, "", map[string]string{"good": goodFile, "other": strings.ReplaceAll(goodFile, "good", "other")})
	if _, err := lexical.Mine(t.Context(), app.MineRequest{}); err != nil {
		t.Fatal(err)
	}
	if st, err := apptest.Index(t, lexical).Stats(t.Context()); err != nil || st.Drawers == 0 || st.Vectors != 0 {
		t.Fatalf("mined without the model: %+v, %v; want drawers and no vectors", st, err)
	}
	root := lexical.Home().Root
	lexical.Close()

	t.Setenv("HIVEMEM_MODEL_DIR", model)
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	a, err := wiring.Open(t.Context(), wiring.Options{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	running(t, a)
	idx := apptest.Index(t, a)
	waitUntil(t, time.Minute, "run's start to embed every drawer", func() (bool, string) {
		st, err := idx.Stats(t.Context())
		if err != nil {
			return false, err.Error()
		}
		return st.Drawers > 0 && st.Vectors == st.Drawers, fmt.Sprintf("%d of %d drawers have a vector", st.Vectors, st.Drawers)
	})
}
