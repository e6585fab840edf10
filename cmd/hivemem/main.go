// Command hivemem is persistent, searchable long-term memory for teams of
// AI agents. See the README for the commands. Installed (or linked) under
// the name "mempalace", it answers to the MemPalace command line instead.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hivemem/hivemem/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.MainAs(ctx, os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
