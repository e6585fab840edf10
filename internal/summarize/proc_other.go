//go:build !unix

package summarize

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist; cancellation
// falls back to exec's default of killing the process itself.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup has nothing to do without process groups.
func killProcessGroup(cmd *exec.Cmd) {}
