package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/reflector"
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

	var results []app.CondenseResult
	named := len(agents) > 0
	if !named && !o.now && !o.dryRun {
		if results, err = a.CondensePass(ctx); err != nil {
			return err
		}
	} else {
		if !named {
			if agents, err = a.Home.Agents(); err != nil {
				return err
			}
		}
		for _, agent := range agents {
			res, err := a.Condense(ctx, app.CondenseRequest{Agent: agent, DryRun: o.dryRun, Force: o.now})
			var ae *reflector.AbortError
			switch {
			case err == nil, errors.As(err, &ae):
			case !named && errors.Is(err, app.ErrNotFound): // gone since listed: skipped
			default:
				return fmt.Errorf("reflect: %w", err)
			}
			results = append(results, res)
		}
	}

	aborted := 0
	for i, res := range results {
		if res.Status == reflector.StatusAborted && !reflector.Benign(res.Reason) {
			aborted++
		}
		if res.Status == reflector.StatusDryRun {
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
	if aborted > 0 {
		return fmt.Errorf("reflect: %d of %d condensations aborted (see hive/log.jsonl)", aborted, len(results))
	}
	return nil
}

// printReflect writes one line per agent; a dry run's file or diff goes to
// stdout (with a "==> agent <==" line when there are several) and its
// summary line to stderr, so the file can be redirected as is.
func printReflect(stdout, stderr io.Writer, results []app.CondenseResult) {
	dry := 0
	for _, res := range results {
		if res.Status == reflector.StatusDryRun {
			dry++
		}
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, "no agents")
	}
	for _, res := range results {
		switch res.Status {
		case reflector.StatusCondensed:
			fmt.Fprintf(stdout, "%s: condensed %s → %s (evicted %d, kept %d, hoisted %d); backup %s\n",
				res.Agent, humanize.IBytes(uint64(res.OldBytes)), humanize.IBytes(uint64(res.NewBytes)), res.Evicted, res.Kept, res.Hoisted, res.Backup)
			if res.MineError != "" {
				fmt.Fprintf(stderr, "%s: warning: %s\n", res.Agent, res.MineError)
			}
		case reflector.StatusDryRun:
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
		case reflector.StatusSkipped:
			fmt.Fprintf(stdout, "%s: skipped (%s: %s)\n", res.Agent, res.Reason, res.Message)
		case reflector.StatusAborted:
			if reflector.Benign(res.Reason) {
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

func newBackupsCommand(g *globals) *cobra.Command {
	return jsonCommand("backups [agent]", "List the pre-condense backups of one agent or all, newest first", cobra.MaximumNArgs(1),
		func(ctx context.Context, args []string, asJSON bool) error {
			agent := ""
			if len(args) == 1 {
				// An empty argument is not "all agents".
				if err := home.ValidateAgentID(args[0]); err != nil {
					return err
				}
				agent = args[0]
			}
			return runBackups(ctx, g, agent, asJSON)
		})
}

func runBackups(ctx context.Context, g *globals, agent string, asJSON bool) error {
	a, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer a.Close()
	bs, err := a.Backups(ctx, app.BackupsRequest{Agent: agent, Known: true})
	if err != nil {
		return fmt.Errorf("backups: %w", err)
	}
	if asJSON {
		return writeJSON(g.stdout, bs)
	}
	if len(bs) == 0 {
		if agent == "" {
			fmt.Fprintln(g.stdout, "no backups")
		} else {
			fmt.Fprintf(g.stdout, "no backups of %s\n", agent)
		}
		return nil
	}
	for _, b := range bs {
		fmt.Fprintf(g.stdout, "%-20s %-22s %10s  %s\n", b.Agent, b.Name, humanize.IBytes(uint64(b.Size)), b.Time.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return nil
}

func newRestoreCommand(g *globals) *cobra.Command {
	cmd := jsonCommand("restore <agent> <backup>", "Put a backup of an agent's memory file back (the current file is backed up first)", cobra.ExactArgs(2),
		func(ctx context.Context, args []string, asJSON bool) error {
			return runRestore(ctx, g, args[0], args[1], asJSON)
		})
	cmd.Long = `Put a backup back. <backup> is a name from ` + "`hivemem backups <agent>`" + ` or "latest".
The current file is backed up first, so a restore can be undone; the swap is
locked and atomic, logged as a restore event, and the file is mined again.`
	return cmd
}

func runRestore(ctx context.Context, g *globals, agent, backup string, asJSON bool) error {
	res, err := request(ctx, g, (*app.App).Restore, app.RestoreRequest{Agent: agent, Backup: backup})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(g.stdout, res)
	}
	switch {
	case res.Unchanged:
		fmt.Fprintf(g.stdout, "%s already matches backup %s; nothing to do\n", agent, res.Backup)
	case res.PreRestoreBackup != "":
		fmt.Fprintf(g.stdout, "restored %s from %s (%s → %s); the replaced file is backup %s\n",
			agent, res.Backup, humanize.IBytes(uint64(res.OldBytes)), humanize.IBytes(uint64(res.NewBytes)), res.PreRestoreBackup)
	default:
		fmt.Fprintf(g.stdout, "restored %s from %s (%s)\n", agent, res.Backup, humanize.IBytes(uint64(res.NewBytes)))
	}
	if res.Archived > 0 {
		fmt.Fprintf(g.stdout, "what the backup lacks is kept in the archive: %s in %s\n", plural(res.Archived, "section"), res.Archive)
	}
	if res.MineError != "" {
		fmt.Fprintf(g.stderr, "warning: %s\n", res.MineError)
	}
	return nil
}
