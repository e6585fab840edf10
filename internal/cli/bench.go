package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hivemem/hivemem/internal/wiring"
)

// benchCommon are the options every retrieval benchmark takes: the
// search modes to run, the home to build and keep, and JSON output.
type benchCommon struct {
	modes  []string
	keep   string
	asJSON bool
}

// keepTempHome is the usage of --keep-home for a benchmark that builds
// its home afresh each run.
const keepTempHome = "build the benchmark home in this directory and keep it (default: a temporary one)"

// addFlags adds --modes, --keep-home (described by keepUsage) and --json.
func (c *benchCommon) addFlags(f *pflag.FlagSet, keepUsage string) {
	f.StringSliceVar(&c.modes, "modes", nil, "modes to run (default lexical,vector,hybrid; vector modes need the model)")
	f.StringVar(&c.keep, "keep-home", "", keepUsage)
	f.BoolVar(&c.asJSON, "json", false, "print one JSON object")
}

func newBenchCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks of retrieval quality and speed",
	}
	cmd.AddCommand(newBenchLocomoCommand(g), newBenchLagCommand(g), newBenchLongMemEvalCommand(g), newBenchUpdatesCommand(g))
	return groupCommand(cmd)
}

// openHome opens the app for the benchmark name over --keep-home, or
// over a fresh temporary home (removed by done) without it, with the
// index the benchmark measures on (wiring.OpenBench), and says
// (unless --json) when it runs lexical-only. Every mode embeds its
// queries itself (no query cache): latency includes the model.
func (c benchCommon) openHome(ctx context.Context, g *globals, name string, opts wiring.Options) (b wiring.Bench, done func(), err error) {
	dir := c.keep
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hivemem-"+name+"-")
		if err != nil {
			return wiring.Bench{}, nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	opts.Logger = g.logger
	h, cfg, err := wiring.LoadHome(dir, true)
	if err == nil {
		cfg.Search.QueryCache = 0 // every query embedded afresh
		b, err = wiring.OpenBench(ctx, h, cfg, opts)
	}
	if err != nil {
		cleanup()
		return wiring.Bench{}, nil, err
	}
	if b.App.EmbedderInfo().Note != "" && !c.asJSON {
		fmt.Fprintf(g.stderr, "note: %s — running lexical only\n", b.App.EmbedderInfo().Note)
	}
	return b, func() { b.App.Close(); cleanup() }, nil
}
