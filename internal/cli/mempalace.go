package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
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
// runs itself: the model it embeds with under MemPalace's short name and
// its usual full names. Case, "_" for "-" and a "sentence-transformers/"
// prefix do not matter (see miniLMName).
var SupportedEmbeddingModels = []string{"minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}

func newMempalaceCommand(g *globals) *cobra.Command {
	var palacePath string
	root := &cobra.Command{
		Use:   "mempalace",
		Short: "hivemem, answering to the MemPalace command line",
		Long: `hivemem installed under the name "mempalace": the MemPalace commands a harness
uses, served by hivemem's palace.

  mempalace init [<dir>] [--yes] [--no-llm]
  mempalace mine <dir> --wing <w> --agent <a>
  mempalace mine <dir> --mode convos --wing <w>   (imports conversation exports)
  mempalace search "<query>" --results N [--wing w] [--room r]
  mempalace wake-up [--wing w]
  mempalace status

The palace is --palace, else $MEMPALACE_PALACE_PATH: a path ending in
"palace" is the palace directory of the hivemem home above it; any other path
is taken as the home itself. Without either, $HIVEMEM_HOME (or the default
home) is used. $MEMPALACE_EMBEDDING_MODEL may be "minilm" or any spelling
of all-MiniLM-L6-v2 or, with an OpenAI-compatible embedder configured, its
model; any other name (such as "embeddinggemma") gets one warning line on
stderr and the palace's own model. $MEMPALACE_EMBEDDING_DEVICE is ignored.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			g.command = cmd.Name()
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
			if w := checkEmbeddingModel(g, os.Getenv("MEMPALACE_EMBEDDING_MODEL"), os.Getenv("MEMPALACE_EMBEDDING_DEVICE")); w != "" {
				fmt.Fprintln(g.stderr, w)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&palacePath, "palace", "", "where the palace lives (default $MEMPALACE_PALACE_PATH)")
	pf.StringVar(&g.home, "home", "", "hivemem home directory (overrides --palace)")
	g.logFlags(pf)
	root.AddCommand(
		newMempalaceInitCommand(g),
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

// miniLMName reports whether name is a spelling of all-MiniLM-L6-v2:
// MemPalace's "minilm", "all-MiniLM-L6-v2", "all_minilm_l6_v2",
// "sentence-transformers/all-MiniLM-L6-v2" and the like.
func miniLMName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "sentence-transformers/")
	n = strings.ReplaceAll(n, "_", "-")
	switch n {
	case "minilm", "all-minilm", "minilm-l6", "minilm-l6-v2", "all-minilm-l6", "all-minilm-l6-v2":
		return true
	}
	return false
}

// checkEmbeddingModel looks at the MEMPALACE_EMBEDDING_MODEL a harness
// asks for. A name hivemem runs (a spelling of all-MiniLM-L6-v2, or the
// model of a configured OpenAI-compatible embedder) is fine and returns "".
// Any other (MemPalace's "embeddinggemma", an unknown name) must not fail
// the harness's call: MemPalace itself falls back to its default for an
// unknown name. The palace's own model is used, and the returned warning
// says so, for one line on stderr; it names the MEMPALACE_EMBEDDING_DEVICE
// asked for (device), which is ignored, when that is set.
func checkEmbeddingModel(g *globals, model, device string) string {
	if strings.TrimSpace(model) == "" {
		return ""
	}
	provider, used := "auto", "all-MiniLM-L6-v2"
	if cfg, err := g.anyConfig(); err == nil {
		provider = cfg.Embedder.Provider
		if provider == "openai" {
			used = cfg.Embedder.Model
		}
	}
	switch provider {
	case "openai":
		// An OpenAI-compatible embedder's model is what `hivemem env` prints.
		if model == used {
			return ""
		}
	case "none":
		used = "none (lexical-only)"
	default:
		if miniLMName(model) {
			return ""
		}
	}
	w := fmt.Sprintf("warning: MEMPALACE_EMBEDDING_MODEL %q is not a model hivemem runs; using the palace's own model, %s", model, used)
	if strings.TrimSpace(device) != "" {
		w += fmt.Sprintf(" (MEMPALACE_EMBEDDING_DEVICE %q is ignored)", device)
	}
	return w
}
