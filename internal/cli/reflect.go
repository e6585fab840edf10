package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type reflectOptions struct {
	now    bool
	dryRun bool
	diff   bool
	asJSON bool
}

func newReflectCommand(g *globals) *cobra.Command {
	var o reflectOptions
	cmd := leafCommand("reflect [agent...]", "Condense memory files that outgrew their triggers (archive, summarise, verify, swap)", cobra.ArbitraryArgs,
		func(ctx context.Context, agents []string) error { return runReflect(ctx, g, o, agents) })
	cmd.Long = `Condense memory files: the oldest sections go verbatim to hive/archive/<agent>/,
a summariser folds them into the condensed history, and the file is rebuilt with
its newest sections untouched, verified, backed up and swapped atomically.

Without agents, one pass over every agent that honours the triggers, the
per-agent backoff after failures and reflector.enabled. --now condenses the
named agents (or all) regardless of triggers and backoff; reflector.enabled =
false still wins. --dry-run prints the would-be file (--diff: a unified diff)
and writes nothing: no archive, no backup, no event; it runs even when the
reflector is disabled.`
	f := cmd.Flags()
	f.BoolVar(&o.now, "now", false, "condense now, ignoring triggers and backoff")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the would-be file and change nothing")
	f.BoolVar(&o.diff, "diff", false, "with --dry-run, print a unified diff instead of the file (implies --dry-run)")
	jsonFlag(cmd, &o.asJSON)
	return cmd
}

func runReflect(ctx context.Context, g *globals, o reflectOptions, agents []string) error {
	if o.diff {
		o.dryRun = true
	}
	a, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer a.Close()

	out, err := a.Reflect(ctx, app.ReflectRequest{Agents: agents, Now: o.now, DryRun: o.dryRun})
	if err != nil {
		return err
	}
	results := out.Results
	for i, res := range results {
		if res.Status == app.CondenseDryRun {
			// The file or its diff, as asked.
			if o.diff {
				results[i].Output = ""
			} else {
				results[i].Diff = ""
			}
		}
	}
	if o.asJSON {
		if err := writeJSON(g.stdout, results); err != nil {
			return err
		}
	} else {
		printReflect(g.stdout, g.stderr, results)
	}
	if out.Failed > 0 {
		return fmt.Errorf("reflect: %d of %d condensations aborted (see hive/log.jsonl)", out.Failed, len(results))
	}
	return nil
}

// printReflect writes one line per agent; a dry run's file or diff goes to
// stdout (with a "==> agent <==" line when there are several) and its
// summary line to stderr, so the file can be redirected as is.
func printReflect(stdout, stderr io.Writer, results []app.CondenseResult) {
	dry := 0
	for _, res := range results {
		if res.Status == app.CondenseDryRun {
			dry++
		}
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, "no agents")
	}
	for _, res := range results {
		switch res.Status {
		case app.CondenseCondensed:
			fmt.Fprintf(stdout, "%s: condensed %s → %s (evicted %d, kept %d, hoisted %d); backup %s\n",
				res.Agent, humanize.IBytes(uint64(res.OldBytes)), humanize.IBytes(uint64(res.NewBytes)), res.Evicted, res.Kept, res.Hoisted, res.Backup)
			if res.MineError != "" {
				fmt.Fprintf(stderr, "%s: warning: %s\n", res.Agent, res.MineError)
			}
		case app.CondenseDryRun:
			fmt.Fprintf(stderr, "%s: dry run: would condense %s → %s (evict %d, keep %d, hoist %d); nothing written\n",
				res.Agent, humanize.IBytes(uint64(res.OldBytes)), humanize.IBytes(uint64(res.NewBytes)), res.Evicted, res.Kept, res.Hoisted)
			if dry > 1 {
				fmt.Fprintf(stdout, "==> %s <==\n", res.Agent)
			}
			if res.Diff != "" {
				fmt.Fprint(stdout, res.Diff)
			} else {
				fmt.Fprint(stdout, res.Output)
			}
		case app.CondenseSkipped:
			fmt.Fprintf(stdout, "%s: skipped (%s: %s)\n", res.Agent, res.Reason, res.Message)
		case app.CondenseAborted:
			if res.NothingToCondense() {
				fmt.Fprintf(stdout, "%s: nothing to condense (%s): %s; the file is left as it is\n", res.Agent, res.Reason, res.Message)
				continue
			}
			fmt.Fprintf(stdout, "%s: aborted (%s): %s\n", res.Agent, res.Reason, res.Message)
			if res.NextAttempt != nil {
				fmt.Fprintf(stdout, "%s: %d consecutive failures; next automatic attempt after %s\n",
					res.Agent, res.Failures, res.NextAttempt.UTC().Format("2006-01-02 15:04:05Z"))
			}
		}
	}
}
