//go:build unix

package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/filetest"
)

// fakeclaude is testdata/fakeclaude, built by the first fakeClaude.
var fakeclaude filetest.Built

// fakeClaude builds testdata/fakeclaude once per test binary run.
func fakeClaude(t *testing.T) string {
	t.Helper()
	return fakeclaude.Path(t, ".", "./testdata/fakeclaude", "claude")
}

func TestMain(m *testing.M) {
	code := m.Run()
	fakeclaude.Remove()
	os.Exit(code)
}

type cliRecord struct {
	Args  []string `json:"args"`
	Cwd   string   `json:"cwd"`
	Stdin string   `json:"stdin"`
}

func newCLI(t *testing.T, model string, timeout time.Duration) Summarizer {
	t.Helper()
	s, err := New(Config{Provider: "claude-cli", Command: fakeClaude(t), Model: model, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var cliReq = Request{
	Agent:   "alice",
	Evicted: []string{"## 2026-11-29 — fixed flaky login test\nThe race was in auth/login_test.go.\n"},
	Pinned:  []string{"- 📌 run tests with go test ./..."}, // the fake hoists it again
}

func TestClaudeCLIRuns(t *testing.T) {
	want := Result{
		Condensed: "- 2026-11-29 fixed the flaky login test in auth/login_test.go",
		Hoist:     []string{"Use flock for the file lock"},
	}
	tests := []struct {
		mode    string
		wantErr string // substring of the error; "" means success
	}{
		{"valid", ""},
		{"fenced", ""},
		{"array", ""},
		{"garbage", "stdout is not JSON"},
		{"prose", "reply did not parse"},
		{"is-error", "Invalid API key"},
		{"max-turns", "error_max_turns"},
		{"exit", "exited with status 2: Error: model 'nope' not found"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "record.json")
			t.Setenv("FAKECLAUDE_MODE", tt.mode)
			t.Setenv("FAKECLAUDE_RECORD", rec)
			s := newCLI(t, "sonnet", time.Minute)
			got, err := s.Summarize(context.Background(), cliReq)
			if tt.wantErr != "" {
				var se *Error
				if !errors.As(err, &se) || se.Reason != ReasonFailed || se.Provider != ProviderClaudeCLI {
					t.Fatalf("err = %#v, want *Error from claude-cli with reason %q", err, ReasonFailed)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %q, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Condensed != want.Condensed || !slices.Equal(got.Hoist, want.Hoist) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

// TestClaudeCLIInvocation checks the flags (print mode, JSON output, the
// model, no tools, no MCP, one turn), that the prompt goes on stdin, and that
// each run gets a fresh temporary directory that is gone afterwards.
func TestClaudeCLIInvocation(t *testing.T) {
	t.Setenv("FAKECLAUDE_MODE", "valid")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var cwds []string
	for _, model := range []string{"claude-haiku-4-5", ""} {
		rec := filepath.Join(t.TempDir(), "record.json")
		t.Setenv("FAKECLAUDE_RECORD", rec)
		if _, err := newCLI(t, model, time.Minute).Summarize(context.Background(), cliReq); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		var r cliRecord
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		wantArgs := []string{"-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--max-turns", "1"}
		if model != "" {
			wantArgs = append(wantArgs, "--model", model)
		}
		if !slices.Equal(r.Args, wantArgs) {
			t.Errorf("args = %q, want %q", r.Args, wantArgs)
		}
		if r.Stdin != Prompt(cliReq) {
			t.Errorf("stdin is not the prompt:\n%s", r.Stdin)
		}
		tmp, err := filepath.EvalSymlinks(os.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if r.Cwd == wd || !strings.HasPrefix(filepath.Base(r.Cwd), "hivemem-summarize-") ||
			(filepath.Dir(r.Cwd) != tmp && filepath.Dir(r.Cwd) != os.TempDir()) {
			t.Errorf("cwd = %q, want a fresh hivemem-summarize-* directory in %s", r.Cwd, os.TempDir())
		}
		if _, err := os.Stat(r.Cwd); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("working directory %s still exists after the run (stat err %v)", r.Cwd, err)
		}
		cwds = append(cwds, r.Cwd)
	}
	if cwds[0] == cwds[1] {
		t.Errorf("two runs shared the working directory %s", cwds[0])
	}
}

// TestClaudeCLITimeout checks that a hanging CLI and the helper it started
// are both killed and that the call returns soon after the timeout, not
// after the pipes' wait delay.
func TestClaudeCLITimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("FAKECLAUDE_MODE", "hang")
	t.Setenv("FAKECLAUDE_PIDS", pidFile)
	t.Setenv("FAKECLAUDE_RECORD", "")
	const timeout = time.Second
	s := newCLI(t, "", timeout)
	start := time.Now()
	_, err := s.Summarize(context.Background(), cliReq)
	elapsed := time.Since(start)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, "timed out after 1s") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a summarize error \"timed out after 1s\" wrapping DeadlineExceeded", err)
	}
	if elapsed > timeout+cliWaitDelay/2 {
		t.Errorf("returned after %s; the process group was not killed promptly", elapsed)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake CLI never recorded its pids: %v", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		t.Fatalf("pid file = %q, want two pids", data)
	}
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		if !waitGone(pid, 3*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d is still running after the timeout", pid)
		}
	}
}

func TestClaudeCLICanceled(t *testing.T) {
	t.Setenv("FAKECLAUDE_MODE", "hang")
	t.Setenv("FAKECLAUDE_PIDS", filepath.Join(t.TempDir(), "pids"))
	t.Setenv("FAKECLAUDE_RECORD", "")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := newCLI(t, "", time.Minute).Summarize(ctx, cliReq)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("err = %v, want a cancellation carrying the caller's context error", err)
	}
}

func TestClaudeCLIMissingCommand(t *testing.T) {
	s, err := New(Config{Provider: "claude-cli", Command: filepath.Join(t.TempDir(), "no-such-claude")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Summarize(context.Background(), cliReq)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, "cannot run") {
		t.Fatalf("err = %v, want a summarize error saying the command cannot run", err)
	}
}

// waitGone polls until pid has exited (a zombie waiting for its new parent
// to reap it counts as exited).
func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
