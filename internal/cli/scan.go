package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

// exitSecretsFound is scan's exit status when it found a secret, so that
// a script can tell a clean home from one that needs a purge.
const exitSecretsFound = 3

func newScanCommand(g *globals) *cobra.Command {
	var asJSON, purge bool
	cmd := leafCommand("scan", "List the secrets already in the home (file, line, kind; never the value)", cobra.NoArgs,
		func(ctx context.Context, _ []string) error { return runScan(ctx, g, asJSON, purge) })
	cmd.Long = "Scan every file of the hive (memory files, archives, forgotten text, sessions, backups and the\n" +
		"event log) for secrets, with the same detector every write redacts with (redact.allow and\n" +
		"redact.rules honoured), and list each as file:line: kind. The value is never shown.\n" +
		"Exits 3 when it found a secret, 0 when the home is clean.\n\n" +
		"--purge then purges every secret found from the whole home, as `hivemem purge` does (every file, the\n" +
		"index, the embedding cache; each kept out afterwards by the block list), without asking: for scripts.\n" +
		"It exits 0 when the purge is done."
	f := cmd.Flags()
	f.BoolVar(&purge, "purge", false, "purge every secret found from the whole home, without asking")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func runScan(ctx context.Context, g *globals, asJSON, purge bool) error {
	res, err := request(ctx, g, (*app.App).Scan, app.ScanRequest{Purge: purge})
	if err != nil {
		if res.Purged != nil && res.Purged.Places > 0 {
			writePurge(g.stdout, *res.Purged)
		}
		return err
	}
	if asJSON {
		if err := writeJSON(g.stdout, res); err != nil {
			return err
		}
	} else {
		files := map[string]bool{}
		for _, f := range res.Findings {
			fmt.Fprintf(g.stdout, "%s:%d: %s\n", f.File, f.Line, f.Kind)
			files[f.File] = true
		}
		if len(res.Findings) == 0 {
			fmt.Fprintf(g.stdout, "no secrets in %s scanned\n", plural(res.Files, "file"))
		} else {
			fmt.Fprintf(g.stdout, "%s in %s (of %d scanned)\n", plural(len(res.Findings), "secret"), plural(len(files), "file"), res.Files)
		}
		if res.Purged != nil {
			fmt.Fprintf(g.stdout, "purging %s:\n", plural(res.Secrets, "distinct secret"))
			writePurge(g.stdout, *res.Purged)
		}
	}
	if len(res.Findings) > 0 && res.Purged == nil {
		return exitError{exitSecretsFound}
	}
	return nil
}
