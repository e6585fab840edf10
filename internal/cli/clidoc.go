package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

//go:generate go run ../../scripts/clidoc ../../docs/cli

// WriteReference writes the CLI reference, one markdown page per command,
// into dir (docs/cli), from the same command definitions the binary runs,
// so that the reference cannot say what the commands do not do. The pages
// carry no generation date, so an unchanged tree writes the same bytes.
func WriteReference(dir string) error {
	root := newRootCommand(&globals{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader("")})
	root.DisableAutoGenTag = true
	disableAutoGenTag(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cli reference: %w", err)
	}
	// Pages of commands that are gone would stay behind: start clean.
	old, err := filepath.Glob(filepath.Join(dir, "hivemem*.md"))
	if err != nil {
		return fmt.Errorf("cli reference: %w", err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("cli reference: %w", err)
		}
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("cli reference: %w", err)
	}
	return nil
}

func disableAutoGenTag(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		c.DisableAutoGenTag = true
		disableAutoGenTag(c)
	}
}
