// Command clidoc writes the CLI reference (docs/cli) from the command
// definitions: `go generate ./internal/cli`.
package main

import (
	"fmt"
	"os"

	"github.com/hivemem/hivemem/internal/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: clidoc DIR")
		os.Exit(2)
	}
	if err := cli.WriteReference(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
