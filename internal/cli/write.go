package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/hookinstall"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/wiring"
)

type rememberOptions struct {
	heading, supersedes       string
	asJSON, force, keepSecret bool
}

func newRememberCommand(g *globals) *cobra.Command {
	var o rememberOptions
	cmd := leafCommand(`remember <agent> "text"`, "Append a dated section to an agent's memory.md (locked, atomic) and mine it", cobra.ExactArgs(2),
		func(ctx context.Context, args []string) error { return runRemember(ctx, g, o, args[0], args[1]) })
	cmd.Long = `Append a dated section. Text "-" reads the note from standard input.`
	f := cmd.Flags()
	f.StringVar(&o.heading, "heading", "", "section heading after the date (default: the text's first line)")
	f.StringVar(&o.supersedes, "supersedes", "", "drawer id or heading of an earlier section this note replaces (marked superseded, left out of search)")
	f.BoolVar(&o.force, "force", false, "write the note even if it repeats one the agent has")
	keepSecretsFlag(cmd, &o.keepSecret, "note")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

// keepSecretsFlag adds --keep-secrets to a command that writes what.
func keepSecretsFlag(cmd *cobra.Command, v *bool, what string) {
	cmd.Flags().BoolVar(v, "keep-secrets", false, "write the secrets the "+what+" holds as they are (a test fixture's fake key) instead of replacing each by [redacted: <kind>]")
}

// sayRedaction tells what a write did about secrets (stderr: the note is
// written either way).
func sayRedaction(g *globals, r app.Redaction) {
	if r.Any() {
		fmt.Fprintln(g.stderr, r.String())
	}
}

func runRemember(ctx context.Context, g *globals, o rememberOptions, agent, text string) error {
	if text == "-" {
		// One byte past the limit tells an over-long note from one that
		// fits; the cut may split a character, so the size is checked here,
		// before the palace checks the text is UTF-8.
		b, err := io.ReadAll(io.LimitReader(g.stdin, palace.MaxRememberBytes+1))
		if err != nil {
			return fmt.Errorf("remember: read stdin: %w", err)
		}
		if len(b) > palace.MaxRememberBytes {
			return fmt.Errorf("remember: text from stdin is %d bytes or more, at most %d allowed", len(b), palace.MaxRememberBytes)
		}
		text = string(b)
	}
	a, err := g.openForWrite(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Remember(ctx, app.RememberRequest{Agent: agent, Text: text, Heading: o.heading, Supersedes: o.supersedes, Force: o.force, KeepSecrets: o.keepSecret})
	if err != nil {
		return err
	}
	if !o.asJSON {
		sayRedaction(g, res.Redaction)
	}
	if res.Duplicate != nil && !o.asJSON {
		sayDuplicate(g, res.Duplicate)
		return nil
	}
	path := a.Home.Abs(res.Source)
	warnMineFailed(g, "note", path, res.MineError)
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	sayCreated(g, agent, res.Created)
	if res.MineError != "" {
		fmt.Fprintf(g.stdout, "remembered in %s (not indexed yet)\n", path)
		return nil
	}
	if res.Existing {
		fmt.Fprintf(g.stdout, "already in %s as %q (line %d): only marked what it replaces\n", path, res.Section.Heading, res.Section.StartLine)
	} else {
		fmt.Fprintf(g.stdout, "remembered in %s (%s added)\n", path, plural(res.DrawersAdded, "drawer"))
	}
	if res.Supersedes != nil {
		fmt.Fprintf(g.stdout, "superseded %q (line %d): left out of search unless --include-superseded\n", res.Supersedes.Heading, res.Supersedes.StartLine)
	}
	if res.Restates != nil {
		arg := hookinstall.ShellQuote(text)
		if strings.ContainsAny(text, "\r\n") || len(text) > 200 {
			arg = "- < the-same-note" // a long note: the same text on stdin
		}
		fmt.Fprintf(g.stdout, "restates %s (%q) with something changed; if this note replaces it: hivemem remember %s --supersedes %s %s\n",
			res.Restates.Of, res.Restates.Heading, agent, res.Restates.Of, arg)
	}
	return nil
}

// openForWrite opens the app for a command that writes markdown: the note
// first, the index after, so that an index that cannot be opened or
// updated (a full disk, a damaged index) is a warning, never a lost note.
func (g *globals) openForWrite(ctx context.Context) (*app.App, error) {
	return g.openWith(ctx, wiring.Options{Home: g.home, Logger: g.logger, Command: g.command, LockWaiting: g.lockWaiting, IndexLater: true})
}

// sayCreated tells that a write made a new agent, so that a mistyped agent
// id does not go unnoticed.
func sayCreated(g *globals, agent string, created bool) {
	if created {
		fmt.Fprintf(g.stdout, "created agent %s\n", agent)
	}
}

// warnMineFailed says on stderr that a write succeeded but mining it
// failed (mineErr), so that nobody retries (which would write it twice);
// the command still exits 0.
func warnMineFailed(g *globals, what, path, mineErr string) {
	if mineErr != "" {
		fmt.Fprintf(g.stderr, "warning: the %s is saved in %s but not searchable yet: %s; "+
			"the next mine indexes it (hivemem run does so by itself), do not add it again\n", what, path, mineErr)
	}
}

type pinOptions struct {
	replaces                  string
	asJSON, force, keepSecret bool
}

func newPinCommand(g *globals) *cobra.Command {
	var o pinOptions
	cmd := leafCommand(`pin <agent> "fact"`, "Add a durable fact to an agent's pinned region (never condensed)", cobra.ExactArgs(2),
		func(ctx context.Context, args []string) error { return runPin(ctx, g, args[0], args[1], o) })
	f := cmd.Flags()
	f.StringVar(&o.replaces, "replaces", "", "a pinned fact the new one replaces (it goes to the archive, dated today)")
	f.BoolVar(&o.force, "force", false, "pin the fact even if a pinned one already says it in other words")
	keepSecretsFlag(cmd, &o.keepSecret, "fact")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

func runPin(ctx context.Context, g *globals, agent, fact string, o pinOptions) error {
	asJSON := o.asJSON
	a, err := g.openForWrite(ctx) // as for remember: the fact first, the index after
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Pin(ctx, app.PinRequest{Agent: agent, Fact: fact, Replaces: o.replaces, Force: o.force, KeepSecrets: o.keepSecret})
	if err != nil {
		return err
	}
	if !asJSON {
		sayRedaction(g, res.Redaction)
	}
	if res.Duplicate != nil && !asJSON {
		sayDuplicate(g, res.Duplicate)
		return nil
	}
	warnMineFailed(g, "fact", a.Home.Abs(res.Source), res.MineError)
	if asJSON {
		return writeJSON(g.stdout, res)
	}
	sayCreated(g, agent, res.Created)
	if res.Restates != nil {
		defer fmt.Fprintf(g.stdout, "restates the pinned fact %q with something changed; if this one replaces it: hivemem unpin %s %s\n",
			res.Restates.Text, agent, hookinstall.ShellQuote(res.Restates.Text))
	}
	if res.Replaced != "" {
		fmt.Fprintf(g.stdout, "pinned for %s in place of %q (archived in %s)\n", agent, res.Replaced, res.Archive)
	} else if res.Added {
		fmt.Fprintf(g.stdout, "pinned for %s\n", agent)
	} else {
		fmt.Fprintf(g.stdout, "already pinned for %s\n", agent)
	}
	return nil
}

func newReindexCommand(g *globals) *cobra.Command {
	return jsonCommand("reindex", "Drop the index and rebuild it from the markdown (embeddings come from the cache)", cobra.NoArgs,
		func(ctx context.Context, _ []string, asJSON bool) error { return runReindex(ctx, g, asJSON) })
}

func runReindex(ctx context.Context, g *globals, asJSON bool) error {
	// IndexLater: a damaged index does not stop the open; the reindex
	// sets it aside and builds a new one.
	a, err := g.openForWrite(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	pctx, done := g.mineProgress(ctx, "reindexing", asJSON)
	// The skips are this command's warnings below, not also log lines.
	res, err := a.Reindex(pctx, app.ReindexRequest{Options: palace.ReindexOptions{ReportsSkips: true}})
	done()
	if res.SetAside != "" {
		fmt.Fprintf(g.stderr, "hivemem: the index was damaged (%s); moved it to %s and rebuilding it from the markdown\n", res.Damage, res.SetAside)
	}
	if err != nil {
		return err
	}
	rep := res.Report
	for _, s := range rep.Skipped {
		fmt.Fprintf(g.stderr, "warning: skipped %s: %s\n", s.Path, s.Reason)
	}
	if asJSON {
		return writeJSON(g.stdout, res)
	}
	fmt.Fprintf(g.stdout, "reindexed %s: %s, embedded %d (cache %d), %.2fs\n",
		plural(rep.Files, "file"), plural(rep.Added, "drawer"), rep.Embedded, rep.CacheHits, rep.Seconds)
	return nil
}
