//go:build unix

package summarize

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in a process group of its own and makes
// cancellation kill the whole group: the claude CLI runs on Node and starts
// helpers, and killing only the leader would leave them running and holding
// our pipes open.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killProcessGroup kills whatever is left of the command's process group
// after it has been waited for. ESRCH (nothing left) is the normal case.
func killProcessGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
