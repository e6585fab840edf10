package cli

import (
	"context"
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

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
