package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/palace"
)

type mineOptions struct {
	wing, agent, room string
	asJSON            bool
}

func newMineCommand(g *globals) *cobra.Command {
	var o mineOptions
	cmd := &cobra.Command{
		Use:   "mine [dir|file]",
		Short: "Mine memory files into the palace (incremental: unchanged files cost one hash)",
		Long: "Mine the markdown memory files under a directory (an agent dir, hive/agents, or any folder) or one file.\n" +
			"Without an argument, mines the whole hive. Binary, invalid UTF-8, oversized and unreadable files are skipped with a warning.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMine(cmd.Context(), g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.wing, "wing", "", "wing for the drawers (default: the agent id)")
	f.StringVar(&o.agent, "agent", "", "agent the files belong to (default: from hive/agents/<id>/)")
	f.StringVar(&o.room, "room", "", "room for every drawer (default: from the section: pinned, condensed, recent, archive)")
	f.BoolVar(&o.asJSON, "json", false, "print a JSON summary")
	refuseEmpty(cmd, "wing", "agent", "room")
	return cmd
}

func runMine(ctx context.Context, g *globals, o mineOptions, args []string) error {
	g.ensureModel(ctx)
	a, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer a.Close()
	release, err := g.lockPalace(ctx, a, "mine")
	if err != nil {
		return err
	}
	defer release()
	dir := a.Home.HiveDir()
	if len(args) == 1 {
		dir = args[0]
	}
	opts := palace.MineOptions{Wing: o.wing, Agent: o.agent, Room: o.room}
	var bar *progressbar.ProgressBar
	if !o.asJSON && isTerminal(g.stderr) {
		opts.Progress = func(done, total int, path string) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(g.stderr),
					progressbar.OptionSetDescription("mining"), progressbar.OptionClearOnFinish())
			}
			_ = bar.Set(done)
		}
	}
	rep, err := a.Palace.Mine(ctx, dir, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if rep.Files == 0 && rep.FilesRemoved == 0 {
		// The palace takes a path that is gone and was never mined as
		// nothing to do (a file deleted as it was written); on the
		// command line it is more likely a typo.
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("mine %s: no such file or directory", dir)
		}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(g.stderr, "warning: skipped %s: %s\n", s.Path, s.Reason)
	}
	if rep.Skipped == nil {
		rep.Skipped = []palace.Skip{}
	}
	if o.asJSON {
		return writeJSON(g.stdout, rep)
	}
	fmt.Fprintf(g.stdout, "mined %d files (%d unchanged, %d changed, %d removed): drawers +%d =%d -%d, embedded %d (cache %d), skipped %d, %.2fs\n",
		rep.Files, rep.Unchanged, rep.Changed, rep.FilesRemoved, rep.Added, rep.Kept, rep.Removed,
		rep.Embedded, rep.CacheHits, len(rep.Skipped), rep.Seconds)
	if a.Embedder.Note != "" && rep.Added > 0 {
		fmt.Fprintf(g.stdout, "note: lexical-only index (%s)\n", a.Embedder.Note)
	}
	return nil
}
