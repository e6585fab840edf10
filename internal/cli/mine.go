package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type mineOptions struct {
	wing, agent, room, mode string
	asJSON                  bool
}

func newMineCommand(g *globals) *cobra.Command {
	var o mineOptions
	cmd := leafCommand("mine [dir|file]", "Mine memory files into the palace (incremental: unchanged files cost one hash)", cobra.MaximumNArgs(1),
		func(ctx context.Context, args []string) error { return runMine(ctx, g, o, args) })
	cmd.Long = "Mine the markdown memory files under a directory (an agent dir, hive/agents, or any folder) or one file.\n" +
		"Without an argument, mines the whole hive. Binary, invalid UTF-8, oversized and unreadable files are skipped with a warning."
	f := cmd.Flags()
	f.StringVar(&o.wing, "wing", "", "wing for the drawers (default: the agent id)")
	f.StringVar(&o.agent, "agent", "", "agent the files belong to (default: from hive/agents/<id>/)")
	f.StringVar(&o.room, "room", "", "room for every drawer (default: from where the section stands: header, pinned, condensed, recent; archive and session for those files)")
	f.StringVar(&o.mode, "mode", "projects", `projects (memory files) or convos (import the conversation files found: see "import")`)
	f.BoolVar(&o.asJSON, "json", false, "print a JSON summary")
	refuseEmpty(cmd, "wing", "agent", "room")
	return cmd
}

func runMine(ctx context.Context, g *globals, o mineOptions, args []string) error {
	// Only init makes a home; the MemPalace drop-in's first mine makes the
	// palace, as MemPalace's does. A missing home is refused before any
	// model is fetched for it.
	if !g.mempalace {
		if err := g.requireHome(); err != nil {
			return err
		}
	}
	g.ensureModel(ctx)
	switch o.mode {
	case "projects", "":
	case "convos":
		return runMineConvos(ctx, g, o, args)
	default:
		return fmt.Errorf("mine: --mode %q: want projects or convos", o.mode)
	}
	a, err := g.open(ctx, g.mempalace)
	if err != nil {
		return err
	}
	defer a.Close()
	// The skips are this command's warnings below, not also log lines.
	req := app.MineRequest{Options: app.MineOptions{Wing: o.wing, Agent: o.agent, Room: o.room, ReportsSkips: true}}
	if len(args) == 1 {
		if args[0] == "" { // "$DIR" with DIR unset: not the whole hive
			return errors.New("mine: the path is empty: name a directory or a file")
		}
		req.Path = args[0]
	}
	pctx, done := g.mineProgress(ctx, "mining", o.asJSON)
	res, err := a.Mine(pctx, req)
	done()
	if err != nil {
		return err
	}
	rep := res.Report
	for _, s := range rep.Skipped {
		fmt.Fprintf(g.stderr, "warning: skipped %s: %s\n", s.Path, s.Reason)
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	fmt.Fprintf(g.stdout, "mined %s (%d unchanged, %d changed, %d removed): drawers +%d =%d -%d, embedded %d (cache %d), skipped %d, %.2fs\n",
		plural(rep.Files, "file"), rep.Unchanged, rep.Changed, rep.FilesRemoved, rep.Added, rep.Kept, rep.Removed,
		rep.Embedded, rep.CacheHits, len(rep.Skipped), rep.Seconds)
	if a.EmbedderInfo().Note != "" && rep.Added > 0 {
		fmt.Fprintf(g.stdout, "note: lexical-only index (%s)\n", a.EmbedderInfo().Note)
	}
	return nil
}

// runMineConvos imports every conversation file found under the path into
// the agent's sessions (the agent: --agent, else --wing, else
// $HIVEMEM_AGENT); a file that does not parse is skipped with a warning.
func runMineConvos(ctx context.Context, g *globals, o mineOptions, args []string) error {
	if len(args) != 1 {
		return errors.New("mine --mode convos: name the directory (or file) of conversations")
	}
	agent := o.agent
	if agent == "" {
		agent = o.wing
	}
	agent, err := agentOrEnv(agent)
	if err != nil {
		return fmt.Errorf("mine --mode convos: %w", err)
	}
	found, err := app.FindConversations(ctx, args[0])
	if err != nil {
		return err
	}
	a, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer a.Close()
	pctx, done := g.mineProgress(ctx, "importing", o.asJSON)
	all, err := a.ImportConversations(pctx, agent, found)
	done()
	if err != nil {
		return err
	}
	return g.printImport(a, all, o.asJSON)
}
