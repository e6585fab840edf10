package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
)

// MainAs runs the command line as the program named argv0 (os.Args[0]):
// installed or linked under the name "mempalace", the binary is a drop-in
// for the MemPalace CLI an existing harness drives; under any other name it
// is hivemem.
func MainAs(ctx context.Context, argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if progName(argv0) == "mempalace" {
		return MainMempalace(ctx, args, stdin, stdout, stderr)
	}
	return Main(ctx, args, stdin, stdout, stderr)
}

// progName is the base name of argv0 without a Windows ".exe".
func progName(argv0 string) string {
	base := filepath.Base(argv0)
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".exe") {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// MainMempalace runs the MemPalace-compatible command line: mine, search,
// wake-up and status with MemPalace's flags, the palace located by
// --palace or MEMPALACE_PALACE_PATH.
func MainMempalace(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr, stdin: stdin, mempalace: true}
	return execute(ctx, newMempalaceCommand(g), "mempalace", args, stdin, stdout, stderr)
}

// SupportedEmbeddingModels are the MEMPALACE_EMBEDDING_MODEL values hivemem
// accepts: the model it embeds with, under both of its usual names.
var SupportedEmbeddingModels = []string{"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}

func newMempalaceCommand(g *globals) *cobra.Command {
	var palacePath string
	root := &cobra.Command{
		Use:   "mempalace",
		Short: "hivemem, answering to the MemPalace command line",
		Long: `hivemem installed under the name "mempalace": the MemPalace commands a harness
uses, served by hivemem's palace.

  mempalace mine <dir> --wing <w> --agent <a>
  mempalace search "<query>" --results N [--wing w] [--room r]
  mempalace wake-up [--wing w]
  mempalace status

The palace is --palace, else $MEMPALACE_PALACE_PATH: a path ending in
"palace" is the palace directory of the hivemem home above it; any other path
is taken as the home itself. Without either, $HIVEMEM_HOME (or the default
home) is used. $MEMPALACE_EMBEDDING_MODEL may name all-MiniLM-L6-v2 (either
spelling) or, with an OpenAI-compatible embedder configured, its model.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := g.setLogger(); err != nil {
				return err
			}
			if g.home == "" {
				p := palacePath
				if p == "" {
					p = os.Getenv("MEMPALACE_PALACE_PATH")
				}
				if p != "" {
					var err error
					if g.home, err = homeFromPalacePath(p); err != nil {
						return err
					}
				}
			}
			return checkEmbeddingModel(g.home, os.Getenv("MEMPALACE_EMBEDDING_MODEL"))
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&palacePath, "palace", "", "where the palace lives (default $MEMPALACE_PALACE_PATH)")
	pf.StringVar(&g.home, "home", "", "hivemem home directory (overrides --palace)")
	g.logFlags(pf)
	root.AddCommand(
		newMineCommand(g),
		newSearchCommand(g),
		newWakeUpCommand(g),
		newStatusCommand(g),
	)
	return root
}

// homeFromPalacePath maps a MemPalace palace path to a hivemem home:
// "<home>/palace" (what `hivemem env` prints) names its parent; any other
// directory is the home itself. "~/" is expanded as MemPalace does.
func homeFromPalacePath(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		hd, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("palace path %s: %w", p, err)
		}
		p = filepath.Join(hd, rest)
	}
	p = filepath.Clean(p)
	if filepath.Base(p) == "palace" {
		return filepath.Dir(p), nil
	}
	return p, nil
}

// checkEmbeddingModel refuses a MEMPALACE_EMBEDDING_MODEL hivemem would not
// honour, rather than silently embedding with another model.
func checkEmbeddingModel(homeDir, model string) error {
	if model == "" {
		return nil
	}
	for _, m := range SupportedEmbeddingModels {
		if strings.EqualFold(model, m) {
			return nil
		}
	}
	// An OpenAI-compatible embedder's model is what `hivemem env` prints.
	if h, err := home.Resolve(homeDir); err == nil {
		if cfg, err := config.Load(h.ConfigPath()); err == nil && cfg.Embedder.Provider == "openai" && cfg.Embedder.Model == model {
			return nil
		}
	}
	return fmt.Errorf("MEMPALACE_EMBEDDING_MODEL %q is not supported: hivemem embeds with %s (set embedder.provider = \"openai\" and embedder.model for another model)",
		model, strings.Join(SupportedEmbeddingModels, " or "))
}
