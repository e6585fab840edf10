//go:build unix

package cli

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwardedSignals are passed on from spawn to the agent it runs.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// terminalSentIt reports whether sig is one a terminal sends to its whole
// foreground process group (Ctrl-C, hangup) while spawn is in that group:
// the child, in the same group, got it already, and a second SIGINT would
// make many interactive agents quit instead of cancelling one request.
func terminalSentIt(sig os.Signal) bool {
	if sig != syscall.SIGINT && sig != syscall.SIGHUP {
		return false
	}
	fg, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// exitStatus is the child's exit code, or 128+n when signal n killed it,
// as shells report it.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
