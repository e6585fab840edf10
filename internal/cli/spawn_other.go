//go:build !unix

package cli

import "os"

// forwardedSignals is empty where signals cannot be sent to a child: the
// console delivers Ctrl-C to the whole group itself.
var forwardedSignals []os.Signal

func terminalSentIt(os.Signal) bool { return false }

// exitStatus is the child's exit code.
func exitStatus(ps *os.ProcessState) int { return ps.ExitCode() }
