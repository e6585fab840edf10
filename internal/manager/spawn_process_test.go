package manager_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpawnForwardsSignals runs `hivemem spawn` around a shell that traps
// signals, sends spawn the signals a harness would, and checks the agent
// got each one and that spawn exits with the agent's status.
func TestSpawnForwardsSignals(t *testing.T) {
	const trapAll = `trap 'echo got-USR1' USR1; trap 'echo got-USR2' USR2; trap 'echo got-HUP' HUP; ` +
		`trap 'echo got-INT' INT; trap 'echo got-TERM; exit 42' TERM; echo ready; while :; do sleep 0.02; done`
	tests := []struct {
		name     string
		script   string
		send     []syscall.Signal
		want     []string
		wantCode int
	}{
		{"trapped signals reach the agent, its exit code comes back", trapAll,
			[]syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM},
			[]string{"got-USR1", "got-USR2", "got-HUP", "got-INT", "got-TERM"}, 42},
		{"an agent killed by the forwarded signal gives 128+n", "echo ready; exec sleep 30",
			[]syscall.Signal{syscall.SIGTERM}, nil, 128 + int(syscall.SIGTERM)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHome(t)
			cmd := exec.Command(bin, "spawn", "alice", "--", "sh", "-c", tc.script)
			cmd.Env = h.env
			var stdout, stderr syncBuf
			cmd.Stdout, cmd.Stderr = &stdout, &stderr // stdin: /dev/null, not a terminal
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
			})
			waitFor(t, 10*time.Second, "the agent to start", func() (bool, string) {
				select {
				case err := <-done:
					t.Fatalf("spawn exited early: %v\n%s", err, stderr.String())
				default:
				}
				return strings.Contains(stdout.String(), "ready"), stderr.String()
			})
			for i, sig := range tc.send {
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				if i < len(tc.want) {
					waitFor(t, 5*time.Second, tc.want[i], func() (bool, string) {
						return strings.Contains(stdout.String(), tc.want[i]), stdout.String()
					})
				}
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("spawn did not exit after its agent was told to stop")
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			if _, err := os.Stat(h.memPath("alice")); err != nil {
				t.Errorf("spawn did not create the memory file: %v", err)
			}
		})
	}
}
