package reflector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/summarize"
)

// fakeSum is a Summarizer whose behaviour each test chooses.
type fakeSum struct {
	fn func(ctx context.Context, req summarize.Request) (summarize.Result, error)

	mu    sync.Mutex
	calls int
	last  summarize.Request
}

func (f *fakeSum) Name() string { return "fake" }

func (f *fakeSum) Summarize(ctx context.Context, req summarize.Request) (summarize.Result, error) {
	f.mu.Lock()
	f.calls++
	f.last = req
	f.mu.Unlock()
	if f.fn == nil {
		return summarize.Result{Condensed: fmt.Sprintf("- %d sections condensed", len(req.Evicted))}, nil
	}
	return f.fn(ctx, req)
}

func (f *fakeSum) request() summarize.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// slowSum delays another summariser, like an LLM that takes its time.
type slowSum struct {
	inner summarize.Summarizer
	delay time.Duration
}

func (s slowSum) Name() string { return "slow-" + s.inner.Name() }

func (s slowSum) Summarize(ctx context.Context, req summarize.Request) (summarize.Result, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return summarize.Result{}, &summarize.Error{Provider: s.Name(), Reason: summarize.ReasonFailed, Message: "canceled", Err: ctx.Err()}
	}
	return s.inner.Summarize(ctx, req)
}

// recMiner records what the reflector asked to mine.
type recMiner struct {
	mu    sync.Mutex
	paths []string
	err   error
}

func (m *recMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.paths = append(m.paths, path)
	return palace.MineReport{Files: 1}, m.err
}

// env is a test home with one reflector.
type env struct {
	t      *testing.T
	home   home.Home
	cfg    config.Config
	sum    summarize.Summarizer
	miner  *recMiner
	events *eventlog.Log
	now    time.Time
	r      *Reflector
	cancel context.CancelFunc // set by tests that cancel mid-condensation
}

// newEnv makes a fresh home and a reflector over it whose settings are
// e.cfg (read live) and whose clock is e.now.
func newEnv(t *testing.T, sum summarize.Summarizer) *env {
	t.Helper()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, home: h, cfg: config.Default(), sum: sum, miner: &recMiner{},
		events: eventlog.Open(h.LogPath()), now: time.Date(2026, 11, 29, 13, 51, 0, 0, time.UTC)}
	e.r = New(Deps{
		Home: h, Settings: func() config.Config { return e.cfg }, Events: e.events, Miner: e.miner,
		Summarizer: sum, LockTimeout: 200 * time.Millisecond, SalvageGrace: -1,
		Now: func() time.Time { return e.now },
	})
	return e
}

func (e *env) path(agent string) string {
	p, err := e.home.MemoryPath(agent)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) write(agent string, data []byte) {
	e.t.Helper()
	p := e.path(agent)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(agent string) []byte {
	e.t.Helper()
	b, err := os.ReadFile(e.path(agent))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) archiveText(agent string) string {
	e.t.Helper()
	files, err := e.r.readArchive(agent)
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		b.Write(f)
	}
	return b.String()
}

func (e *env) eventsOf(typ string) []eventlog.Event {
	e.t.Helper()
	evs, err := e.events.Read(0, func(ev eventlog.Event) bool { return ev.Kind == typ })
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) backups(agent string) []Backup {
	e.t.Helper()
	bs, err := Backups(e.home, agent)
	if err != nil {
		e.t.Fatal(err)
	}
	return bs
}

// filler is deterministic prose of about n bytes.
func filler(seed, n int) string {
	words := []string{"deploy", "config", "review", "latency", "cache", "schema", "retry", "token", "build", "queue", "shard", "index"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(seed*7+i*3)%len(words)])
		if i%12 == 11 {
			b.WriteString(".\n")
		}
	}
	return strings.TrimRight(b.String(), " \n") + "\n"
}

// sectionText renders ordinary section i.
func sectionText(i, size int) string {
	return fmt.Sprintf("## 2026-%02d-%02d — note %d\nmarker-%04d\n%s\n", 1+i%12, 1+i%28, i, i, filler(i, size))
}

// memoryFile is a never-condensed file: a title and n sections of about
// size bytes each.
func memoryFile(n, size int) []byte {
	var b strings.Builder
	b.WriteString("# Memory — alice (alice)\n\n")
	for i := range n {
		b.WriteString(sectionText(i, size))
	}
	return []byte(b.String())
}

// mustParse parses data or fails the test.
func mustParse(t *testing.T, data []byte) *memfile.File {
	t.Helper()
	f, err := memfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
