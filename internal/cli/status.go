package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/store"
)

type agentStatus struct {
	Agent     string    `json:"agent"`
	Bytes     int64     `json:"bytes"`
	BudgetPct float64   `json:"budget_pct"`
	Sections  int       `json:"sections"`
	Pinned    int       `json:"pinned"`
	Drawers   int       `json:"drawers"`
	LastMined time.Time `json:"last_mined,omitzero"`
	Error     string    `json:"error,omitempty"`
}

type statusReport struct {
	Home     string           `json:"home"`
	Backend  string           `json:"backend"`
	Search   string           `json:"search_mode"`
	Embedder app.EmbedderInfo `json:"embedder"`
	Index    store.Stats      `json:"index"`
	Agents   []agentStatus    `json:"agents"`
}

func newStatusCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show agents, index size, model and last mine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func collectStatus(ctx context.Context, a *app.App) (statusReport, error) {
	st, err := a.Store.Stats(ctx)
	if err != nil {
		return statusReport{}, err
	}
	r := statusReport{Home: a.Home.Root, Backend: a.Store.Backend(), Search: a.Palace.Mode(), Embedder: a.Embedder, Index: st, Agents: []agentStatus{}}
	wingDrawers := map[string]int{}
	for _, w := range st.Wings {
		wingDrawers[w.Wing] = w.Drawers
	}
	ids, err := a.Home.Agents()
	if err != nil {
		return r, err
	}
	for _, id := range ids {
		as := agentStatus{Agent: id, Drawers: wingDrawers[id]}
		path, _ := a.Home.MemoryPath(id)
		data, err := os.ReadFile(path)
		if err != nil {
			as.Error = err.Error()
			r.Agents = append(r.Agents, as)
			continue
		}
		as.Bytes = int64(len(data))
		as.BudgetPct = 100 * float64(as.Bytes) / float64(a.Config.Reflector.BudgetBytes)
		if mf, err := memfile.Parse(data); err != nil {
			as.Error = err.Error()
		} else {
			as.Sections, as.Pinned = len(mf.Recent()), len(mf.Pinned())
		}
		if f, err := a.Store.GetFile(ctx, a.Home.Rel(path)); err == nil {
			as.LastMined = f.MinedAt
		}
		r.Agents = append(r.Agents, as)
	}
	return r, nil
}

func runStatus(ctx context.Context, g *globals, asJSON bool) error {
	a, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := collectStatus(ctx, a)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(g.stdout, r)
	}
	w := g.stdout
	fmt.Fprintf(w, "home:     %s\n", r.Home)
	fmt.Fprintf(w, "backend:  %s, %d files, %d drawers, %d vectors, %s\n", r.Backend, r.Index.Files, r.Index.Drawers, r.Index.Vectors, human(r.Index.SizeBytes))
	switch {
	case r.Embedder.Provider == "none":
		fmt.Fprintf(w, "search:   lexical-only — %s\n", r.Embedder.Note)
	default:
		fmt.Fprintf(w, "search:   %s — %s %s (%d-d", r.Search, r.Embedder.Provider, r.Embedder.Model, r.Embedder.Dim)
		if r.Embedder.Kernel != "" {
			fmt.Fprintf(w, ", kernel %s", r.Embedder.Kernel)
		}
		fmt.Fprintln(w, ")")
	}
	if !r.Index.LastMine.IsZero() {
		fmt.Fprintf(w, "mined:    %s\n", r.Index.LastMine.Local().Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "mined:    never (run `hivemem mine`)")
	}
	fmt.Fprintf(w, "agents:   %d\n", len(r.Agents))
	for _, as := range r.Agents {
		if as.Error != "" {
			fmt.Fprintf(w, "  %-20s error: %s\n", as.Agent, as.Error)
			continue
		}
		fmt.Fprintf(w, "  %-20s %9s %5.1f%% of budget, %3d sections, %2d pinned, %4d drawers\n",
			as.Agent, human(as.Bytes), as.BudgetPct, as.Sections, as.Pinned, as.Drawers)
	}
	return nil
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
