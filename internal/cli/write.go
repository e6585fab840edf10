package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

type rememberOptions struct {
	heading string
	asJSON  bool
}

func newRememberCommand(g *globals) *cobra.Command {
	var o rememberOptions
	cmd := &cobra.Command{
		Use:   `remember <agent> "text"`,
		Short: "Append a dated section to an agent's memory.md (locked, atomic) and mine it",
		Long:  `Append a dated section. Text "-" reads the note from standard input.`,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRemember(cmd.Context(), g, o, args[0], args[1])
		},
	}
	cmd.Flags().StringVar(&o.heading, "heading", "", "section heading after the date (default: the text's first line)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return takesText(cmd)
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
	// The note first, the index after: an index that cannot be opened or
	// updated (a full disk, a damaged index) is a warning, never a lost
	// note.
	h, _, err := app.OpenHome(app.Options{Home: g.home, Create: false})
	if err != nil {
		return err
	}
	created, err := palace.RememberFile(ctx, h, agent, o.heading, text, time.Now())
	if err != nil {
		return err
	}
	path, _ := h.MemoryPath(agent)
	rep, merr := g.indexWritten(ctx, path, "remember")
	warnMineFailed(g, "note", path, merr)
	if o.asJSON {
		out := map[string]any{"agent": agent, "created": created, "path": path, "mine": rep}
		if merr != nil {
			out["mine_error"] = merr.Error()
		}
		return writeJSON(g.stdout, out)
	}
	sayCreated(g, agent, created)
	if merr != nil {
		fmt.Fprintf(g.stdout, "remembered in %s (not indexed yet)\n", path)
		return nil
	}
	fmt.Fprintf(g.stdout, "remembered in %s (%s added)\n", path, plural(rep.Added, "drawer"))
	return nil
}

// indexWritten mines a memory file hivemem just wrote, opening the palace
// and taking its write lock. The error is for a warning: the write stands.
func (g *globals) indexWritten(ctx context.Context, path, command string) (palace.MineReport, error) {
	a, err := g.open(ctx, true)
	if err != nil {
		return palace.MineReport{}, err
	}
	defer a.Close()
	release, err := g.lockPalace(ctx, a, command)
	if err != nil {
		return palace.MineReport{}, err
	}
	defer release()
	return a.Palace.Mine(ctx, path, palace.MineOptions{})
}

// sayCreated tells that a write made a new agent, so that a mistyped agent
// id does not go unnoticed.
func sayCreated(g *globals, agent string, created bool) {
	if created {
		fmt.Fprintf(g.stdout, "created agent %s\n", agent)
	}
}

// warnMineFailed says on stderr that a write succeeded but mining it
// failed, so that nobody retries (which would write it twice); the command
// still exits 0.
func warnMineFailed(g *globals, what, path string, err error) {
	if err != nil {
		fmt.Fprintf(g.stderr, "warning: the %s is saved in %s but not searchable yet: %v; "+
			"the next mine indexes it (hivemem run does so by itself), do not add it again\n", what, path, err)
	}
}

func newPinCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `pin <agent> "fact"`,
		Short: "Add a durable fact to an agent's pinned region (never condensed)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPin(cmd.Context(), g, args[0], args[1], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return takesText(cmd)
}

func runPin(ctx context.Context, g *globals, agent, fact string, asJSON bool) error {
	// As for remember: the fact first, the index after.
	h, _, err := app.OpenHome(app.Options{Home: g.home, Create: false})
	if err != nil {
		return err
	}
	added, created, err := palace.PinFile(ctx, h, agent, fact)
	if err != nil {
		return err
	}
	var merr error
	if added {
		path, _ := h.MemoryPath(agent)
		_, merr = g.indexWritten(ctx, path, "pin")
		warnMineFailed(g, "fact", path, merr)
	}
	return printPinned(g, agent, added, created, merr, asJSON)
}

// printPinned reports a pin: added or already there, and a failed index
// update (mineErr) in the JSON.
func printPinned(g *globals, agent string, added, created bool, mineErr error, asJSON bool) error {
	if asJSON {
		out := map[string]any{"agent": agent, "created": created, "added": added}
		if mineErr != nil && added {
			out["mine_error"] = mineErr.Error()
		}
		return writeJSON(g.stdout, out)
	}
	sayCreated(g, agent, created)
	if added {
		fmt.Fprintf(g.stdout, "pinned for %s\n", agent)
	} else {
		fmt.Fprintf(g.stdout, "already pinned for %s\n", agent)
	}
	return nil
}

// reindex opens the palace and rebuilds the index under the palace lock,
// with a progress bar on a terminal unless quiet.
func (g *globals) reindex(ctx context.Context, quiet bool) (palace.MineReport, error) {
	a, err := g.open(ctx, false)
	if err != nil {
		return palace.MineReport{}, err
	}
	defer a.Close()
	release, err := g.lockPalace(ctx, a, "reindex")
	if err != nil {
		return palace.MineReport{}, err
	}
	defer release()
	pctx, done := g.mineProgress(ctx, "reindexing", quiet)
	defer done()
	return a.Palace.Reindex(pctx)
}

func newReindexCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Drop the index and rebuild it from the markdown (embeddings come from the cache)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := g.reindex(cmd.Context(), asJSON)
			if err != nil && app.IndexDamaged(err) {
				// The index is disposable: set the damaged file aside
				// and build a new one from the markdown.
				h, herr := home.Resolve(g.home)
				if herr != nil {
					return errors.Join(err, herr)
				}
				moved, serr := app.SetAsideIndex(h, time.Now())
				if serr != nil {
					return errors.Join(err, serr)
				}
				fmt.Fprintf(g.stderr, "hivemem: the index was damaged (%v); moved it to %s and rebuilding it from the markdown\n", err, moved)
				rep, err = g.reindex(cmd.Context(), asJSON)
			}
			if err != nil {
				return err
			}
			for _, s := range rep.Skipped {
				fmt.Fprintf(g.stderr, "warning: skipped %s: %s\n", s.Path, s.Reason)
			}
			if rep.Skipped == nil {
				rep.Skipped = []palace.Skip{}
			}
			if asJSON {
				return writeJSON(g.stdout, rep)
			}
			fmt.Fprintf(g.stdout, "reindexed %s: %s, embedded %d (cache %d), %.2fs\n",
				plural(rep.Files, "file"), plural(rep.Added, "drawer"), rep.Embedded, rep.CacheHits, rep.Seconds)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
