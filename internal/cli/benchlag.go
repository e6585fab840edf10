package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/bench/lag"
)

type lagOptions struct {
	duration time.Duration
	rate     float64
	clients  int
	seed     int
	binary   string
	keep     string
	asJSON   bool
}

func newBenchLagCommand(g *globals) *cobra.Command {
	var o lagOptions
	cmd := noArgsCommand("mine-lag", "Append-to-searchable lag of a real `hivemem run`, without and with concurrent hybrid-search load",
		func(ctx context.Context) error { return runBenchLag(ctx, g, o) })
	cmd.Long = `Starts ` + "`hivemem run`" + ` on a loopback port over a fresh temporary home (seeded with
--seed sections so searches have work), then runs two phases of --duration each: an
agent appends a uniquely marked section --rate times a second, and the time from
each append until a lexical search finds its marker is measured; in the second
phase --clients goroutines run hybrid searches (random queries, so the query cache
does not answer them) against the same server all along. Prints p50/p99/max lag per
phase. Loopback only; the whole run is bounded (each phase waits at most 60 s for
its last appends to become searchable).`
	f := cmd.Flags()
	f.DurationVar(&o.duration, "duration", 20*time.Second, "length of each phase")
	f.Float64Var(&o.rate, "rate", 20, "appends per second")
	f.IntVar(&o.clients, "clients", 20, "concurrent hybrid-search clients in the loaded phase")
	f.IntVar(&o.seed, "seed", 300, "sections to seed the home with before measuring")
	f.StringVar(&o.binary, "binary", "", "hivemem binary to run (default: this one)")
	f.StringVar(&o.keep, "keep-home", "", "build the home in this directory and keep it (default: a temporary one)")
	jsonFlag(cmd, &o.asJSON)
	return cmd
}

func runBenchLag(ctx context.Context, g *globals, o lagOptions) error {
	lo := lag.Options{Duration: o.duration, Rate: o.rate, Clients: o.clients, Seed: o.seed, Binary: o.binary, Keep: o.keep}
	if !o.asJSON {
		lo.Log = g.stderr
	}
	phases, err := lag.Run(ctx, lo)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, phases)
	}
	lag.WriteText(g.stdout, lo, phases)
	return nil
}
