package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type purgeOptions struct {
	dryRun, yes, asJSON bool
}

func newPurgeCommand(g *globals) *cobra.Command {
	var o purgeOptions
	cmd := leafCommand(`purge "TEXT"`,
		"Take a text (a secret pasted by mistake) out of every file of the home and the index, for good",
		cobra.ExactArgs(1), func(ctx context.Context, args []string) error {
			return runPurge(ctx, g, o, app.PurgeRequest{Text: args[0], DryRun: o.dryRun})
		})
	cmd.Long = "Take TEXT out of the whole home: every agent's memory file, sessions, archives, forgotten text, backups, the\n" +
		"event log, leftovers of interrupted writes, set-aside damaged indexes, the index and the embedding cache. A line that\n" +
		"is only TEXT goes; elsewhere TEXT becomes " + `"[purged]"` + ". The purge is recorded first (a hash and the length, never the\n" +
		"text), so a purge that is killed is finished by the next one or by the next command that opens the home. TEXT stays\n" +
		"on a block list: a later note, fact or import that brings it back is redacted on the way in. Files outside the home\n" +
		"(the transcripts hooks import from, exports, other machines' homes sharing a palace) are not ours to change.\n\n" +
		"TEXT must be at least 8 bytes. --dry-run changes nothing and says where TEXT stands. It asks you to type \"purge\"\n" +
		"unless --yes. The output names places, never the text."
	f := cmd.Flags()
	f.BoolVar(&o.dryRun, "dry-run", false, "change nothing: say where the text stands, as counts")
	f.BoolVar(&o.yes, "yes", false, "purge without asking")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

func runPurge(ctx context.Context, g *globals, o purgeOptions, req app.PurgeRequest) error {
	if err := req.Validate(); err != nil {
		return err
	}
	if !req.DryRun && !o.yes {
		fmt.Fprint(g.stderr, "purge: this takes the text out of every file of the home and the index, for good.\ntype purge to go on: ")
		answer, err := bufio.NewReader(g.stdin).ReadString('\n')
		if err != nil && strings.TrimSpace(answer) == "" {
			return errors.New("purge: not confirmed (no answer; --yes purges without asking)")
		}
		if strings.TrimSpace(answer) != "purge" {
			return errors.New("purge: not confirmed; nothing changed")
		}
	}
	res, err := request(ctx, g, (*app.App).Purge, req)
	if err != nil {
		if res.Places > 0 {
			writePurge(g.stdout, res)
		}
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	writePurge(g.stdout, res)
	return nil
}

// writePurge says where a purge cleaned (or would), as counts per kind of
// place, never the text.
func writePurge(w io.Writer, res app.PurgeResult) {
	verb := "purged from"
	if res.DryRun {
		verb = "would purge from"
	}
	files := len(res.Files)
	if files == 0 && res.Drawers == 0 {
		if res.DryRun {
			fmt.Fprintln(w, "the text is nowhere in the home")
		} else {
			fmt.Fprintln(w, "the text is nowhere in the home (now on the block list)")
		}
	} else {
		fmt.Fprintf(w, "%s %s: %s (the files of %s) and %s of the index\n", verb, plural(res.Places, "place"),
			plural(files, "file"), plural(len(res.Agents), "agent"), plural(res.Drawers, "drawer"))
		kinds := map[string]int{}
		for _, f := range res.Files {
			kinds[f.Kind]++
		}
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(w, "  %-16s %d\n", k, kinds[k])
		}
	}
	if res.Finished > 0 {
		fmt.Fprintf(w, "finished %s that had been interrupted\n", plural(res.Finished, "earlier purge"))
	}
	for _, l := range res.Left {
		fmt.Fprintf(w, "left as it is: %s holds the text; edit it yourself\n", l)
	}
	fmt.Fprintln(w, "note: "+res.Note)
}
