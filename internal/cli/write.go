package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/wiring"
)

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

// sayDuplicate reports a refused repeat: nothing written, exit 0.
func sayDuplicate(g *globals, d *app.Duplicate) {
	what := d.Heading
	if what == "" {
		what = d.Text
	}
	fmt.Fprintf(g.stdout, "duplicate of %s (%s: %q): nothing written; --force writes it anyway\n", d.Of, d.Why, what)
}
