package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type searchOptions struct {
	wing, room, agent, since, until, asOf, mode string
	results                                     int
	asJSON, superseded                          bool
	resultsGiven                                bool // --results was given: 0 is refused, not the default
}

func newSearchCommand(g *globals) *cobra.Command {
	var o searchOptions
	cmd := leafCommand(`search "query"`, "Search the palace (hybrid BM25 + vector; lexical-only without a model)", cobra.MinimumNArgs(1),
		func(ctx context.Context, args []string) error { return runSearch(ctx, g, o, strings.Join(args, " ")) })
	cmd.Long = "Search every drawer in scope. Any text is safe as a query: quotes, *, NEAR, -, parentheses and SQL are searched as words, never interpreted.\n" +
		"Several arguments are joined with spaces."
	takesText(cmd)
	f := cmd.Flags()
	f.StringVar(&o.wing, "wing", "", "only this wing")
	f.StringVar(&o.room, "room", "", "only this room (pinned, condensed, recent, archive, header, session; or one given to mine --room)")
	f.StringVar(&o.agent, "agent", "", "only this agent")
	f.StringVar(&o.since, "since", "", "only sections dated on or after YYYY-MM-DD")
	f.StringVar(&o.until, "until", "", "only sections dated on or before YYYY-MM-DD")
	f.StringVar(&o.asOf, "as-of", "", "the day the query is asked, YYYY-MM-DD (default today): a time it names (\"last week\", \"two months ago\") is counted from it, and sections dated then rank higher")
	f.StringVar(&o.mode, "mode", "", "hybrid, lexical or vector (default: hybrid when a model is installed)")
	f.IntVarP(&o.results, "results", "n", 0, "number of results (default: search.results in config.toml, 5)")
	jsonFlag(cmd, &o.asJSON)
	f.BoolVar(&o.superseded, "include-superseded", false, "also search sections marked as superseded by a later one")
	refuseEmpty(cmd, "wing", "room", "agent")
	// Leaving --results out means search.results from the config, as in
	// the HTTP API; an explicit 0 is refused (by the app).
	given(cmd, "results", &o.resultsGiven)
	return cmd
}

func runSearch(ctx context.Context, g *globals, o searchOptions, q string) error {
	a, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Search(ctx, app.SearchRequest{Query: q, Results: o.results, ResultsGiven: o.resultsGiven, Mode: o.mode,
		Wing: o.wing, Room: o.room, Agent: o.agent, Since: o.since, Until: o.until, AsOf: o.asOf, IncludeSuperseded: o.superseded,
		UnknownIsEmpty: g.mempalace})
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	hits := res.Hits
	if len(hits) == 0 {
		fmt.Fprintf(g.stdout, "no results for %q\n", q)
		return nil
	}
	for i, h := range hits {
		// A dated heading ("2026-11-29 — fixed …") already shows the date.
		date := ""
		if h.Date != "" && !strings.Contains(h.Heading, h.Date) {
			date = "  " + h.Date
		}
		fmt.Fprintf(g.stdout, "%d. [%s/%s] %s%s\n   %s:%d-%d  id %s  score %.4f\n", i+1, h.Wing, h.Room, h.Heading, date,
			h.Source, h.LineStart, h.LineEnd, h.ID, h.Score)
		if note := h.SupersededNote(); note != "" {
			fmt.Fprintf(g.stdout, "   ⚠ %s\n", note)
		}
		for _, l := range strings.Split(excerpt(h.Text, 6), "\n") {
			fmt.Fprintf(g.stdout, "   │ %s\n", l)
		}
		fmt.Fprintln(g.stdout)
	}
	return nil
}

// excerpt keeps the first n lines of a hit for the terminal.
func excerpt(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)", len(lines)-n))
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > 200 {
			lines[i] = string(r[:200]) + "…"
		}
	}
	return strings.Join(lines, "\n")
}
