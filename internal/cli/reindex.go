package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

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
	var req app.ReindexRequest
	req.Options.ReportsSkips = true
	res, err := a.Reindex(pctx, req)
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
