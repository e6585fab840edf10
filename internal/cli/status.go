package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/manager"
)

// statusReport is `hivemem status`: the app's status (the home, the
// index and every agent, as MCP memory_status reports them), and the
// manager.
type statusReport struct {
	app.Status
	// ModelAsked is the MEMPALACE_EMBEDDING_MODEL a harness set, when
	// hivemem does not run that model (Embedder is what is used instead).
	ModelAsked string      `json:"embedding_model_asked,omitempty"`
	Manager    managerInfo `json:"manager"`
}

// managerInfo says whether `hivemem run` serves the home, and how it does.
type managerInfo struct {
	Running       bool          `json:"running"`
	PID           int           `json:"pid,omitempty"`
	Started       time.Time     `json:"started,omitzero"`
	UptimeSeconds float64       `json:"uptime_seconds,omitempty"`
	HTTP          string        `json:"http,omitempty"`
	Pending       int           `json:"pending,omitempty"`
	LastScan      time.Time     `json:"last_scan,omitzero"`
	NextPass      time.Time     `json:"next_reflector_pass,omitzero"`
	Problems      []app.Problem `json:"problems,omitempty"`
	// MineLagSeconds and UnminedAgeSeconds are the manager's (see
	// app.ManagerStatus): the last mine's change-to-searchable lag, and the
	// age of the oldest change not yet mined.
	MineLagSeconds    float64 `json:"mine_lag_seconds,omitempty"`
	UnminedAgeSeconds float64 `json:"unmined_age_seconds,omitempty"`
	// Error is why the running manager's own status could not be had (the
	// per-agent mining backoff is then unknown).
	Error string `json:"error,omitempty"`
}

func newStatusCommand(g *globals) *cobra.Command {
	return jsonCommand("status", "Show agents, index size, model and last mine", cobra.NoArgs,
		func(ctx context.Context, _ []string, asJSON bool) error { return runStatus(ctx, g, asJSON) })
}

// collectStatus is the app's status, with the running manager's (each
// agent's mining state and the mining switch in force are its).
func collectStatus(ctx context.Context, a *app.App) (statusReport, error) {
	var r statusReport
	var ms *app.ManagerStatus
	inst, running, err := manager.Running(a.Home())
	switch {
	case err != nil:
		r.Manager.Error = err.Error()
	case running:
		r.Manager = managerInfo{Running: true, PID: inst.PID, Started: inst.Started, HTTP: inst.HTTP}
		if !inst.Started.IsZero() {
			r.Manager.UptimeSeconds = time.Since(inst.Started).Seconds()
		}
		got, err := fetchManagerStatus(ctx, inst.HTTP, a.Settings().Manager.Token)
		if err != nil {
			r.Manager.Error = err.Error()
			break
		}
		ms = &got
		r.Manager.Pending, r.Manager.LastScan, r.Manager.NextPass, r.Manager.Problems = ms.Pending, ms.LastScan, ms.NextPass, ms.Problems
		r.Manager.MineLagSeconds, r.Manager.UnminedAgeSeconds = ms.MineLagSeconds, ms.UnminedAgeSeconds
	}
	st, err := a.Status(ctx, app.StatusRequest{Manager: ms})
	if err != nil {
		return statusReport{}, err
	}
	r.Status = st
	return r, nil
}

// fetchManagerStatus asks the running manager for its status, which holds
// what only it knows: mining backoff, pending changes, recent problems.
func fetchManagerStatus(ctx context.Context, addr, token string) (app.ManagerStatus, error) {
	if addr == "" {
		return app.ManagerStatus{}, errors.New("the manager serves no HTTP (--http off): mining state unknown")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ms, err := client.New(addr, token).Manager(ctx)
	if err != nil {
		return ms, fmt.Errorf("manager status: %w", err)
	}
	return ms, nil
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
	if asked := os.Getenv("MEMPALACE_EMBEDDING_MODEL"); checkEmbeddingModel(g, asked, "") != "" {
		r.ModelAsked = asked
	}
	if asJSON {
		return writeJSON(g.stdout, r)
	}
	w := g.stdout
	if r.HomeID != "" {
		fmt.Fprintf(w, "home:     %s (id %s)\n", r.Home, r.HomeID)
	} else {
		fmt.Fprintf(w, "home:     %s\n", r.Home)
	}
	fmt.Fprintf(w, "backend:  %s (vector search: %s), %s, %s, %s, %s\n", r.Backend, r.Index.VectorMode,
		plural(r.Index.Files, "file"), plural(r.Index.Drawers, "drawer"), plural(r.Index.Vectors, "vector"), humanize.IBytes(uint64(r.Index.SizeBytes)))
	switch {
	case r.Embedder.Provider == "none":
		fmt.Fprintf(w, "search:   lexical-only — %s\n", r.Embedder.Note)
	default:
		fmt.Fprintf(w, "search:   %s — %s %s (%d-d", r.Search, r.Embedder.Provider, r.Embedder.Model, r.Embedder.Dim)
		if r.Embedder.Kernel != "" {
			fmt.Fprintf(w, ", kernel %s", r.Embedder.Kernel)
		}
		fmt.Fprintln(w, ")")
		if n := r.WithoutVectors; n > 0 {
			it := "them"
			if n == 1 {
				it = "it"
			}
			fmt.Fprintf(w, "vectors:  %s of %d still to embed (written without the model): %s embeds %s; until then search by meaning misses %s\n",
				plural(n, "drawer"), r.Index.Drawers, embedsNext(r.Manager.Running), it, it)
		}
	}
	if r.ModelAsked != "" {
		used := "none (lexical-only)"
		if r.Embedder.Provider != "none" {
			used = r.Embedder.Model
		}
		fmt.Fprintf(w, "model:    asked %q (MEMPALACE_EMBEDDING_MODEL), not one hivemem runs; using %s\n", r.ModelAsked, used)
	}
	if !r.Index.LastMine.IsZero() {
		fmt.Fprintf(w, "mined:    %s\n", r.Index.LastMine.Local().Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "mined:    never (run `hivemem mine`)")
	}
	fmt.Fprintf(w, "condense: %s\n", r.Condense)
	fmt.Fprintf(w, "redact:   %s\n", r.Redact)
	printManager(w, r.Manager)
	if !r.Mining {
		fmt.Fprintln(w, "mining:   off (manager.mining = false): nothing is mined or condensed automatically; search and wake-up still answer")
	}
	fmt.Fprintf(w, "agents:   %d\n", len(r.Agents))
	now := time.Now()
	for _, as := range r.Agents {
		if as.Error != "" {
			fmt.Fprintf(w, "  %-20s error: %s\n", as.Agent, as.Error)
			continue
		}
		fmt.Fprintf(w, "  %-20s %9s %5.1f%% of budget, %12s, %2d pinned, %12s, mined %s, condensed %s\n",
			as.Agent, humanize.IBytes(uint64(as.Bytes)), as.BudgetPct, plural(as.Sections, "section"), as.Pinned, plural(as.Drawers, "drawer"), ago(now, as.LastMined), ago(now, as.LastCondensed))
		if as.Skipped != "" {
			fmt.Fprintf(w, "  %-20s   not indexed: %s\n", "", as.Skipped)
		}
		if b := as.MiningBackoff; b != nil {
			fmt.Fprintf(w, "  %-20s   mining failing: %d in a row, next try %s: %s\n", "", b.Failures, b.NextAttempt.Local().Format(time.TimeOnly), b.LastError)
		}
		if b := as.ReflectorBackoff; b != nil {
			fmt.Fprintf(w, "  %-20s   condensing failing: %d in a row (%s), next try %s: %s\n", "", b.Failures, b.LastReason, b.NextAttempt.Local().Format(time.DateTime), b.LastError)
		}
		if h := as.Restored; h != nil {
			fmt.Fprintf(w, "  %-20s   restored from backup %s at %s: not condensed automatically until the file changes (reflect --now to condense it)\n", "", h.Backup, h.At.Local().Format(time.DateTime))
		}
	}
	return nil
}

func printManager(w io.Writer, m managerInfo) {
	if !m.Running {
		fmt.Fprintln(w, "manager:  not running (start it with `hivemem run`)")
		if m.Error != "" {
			fmt.Fprintf(w, "          %s\n", m.Error)
		}
		return
	}
	where := "no HTTP"
	if m.HTTP != "" {
		where = "http://" + m.HTTP
	}
	fmt.Fprintf(w, "manager:  running, pid %d, up %s, %s", m.PID, (time.Duration(m.UptimeSeconds) * time.Second).String(), where)
	if m.Pending > 0 {
		fmt.Fprintf(w, ", %s pending", plural(m.Pending, "change"))
	}
	if m.MineLagSeconds > 0 {
		fmt.Fprintf(w, ", last mine lag %.1fs", m.MineLagSeconds)
	}
	if m.UnminedAgeSeconds > 0 {
		fmt.Fprintf(w, ", oldest unmined change %.1fs old", m.UnminedAgeSeconds)
	}
	fmt.Fprintln(w)
	if m.Error != "" {
		fmt.Fprintf(w, "          %s\n", m.Error)
	}
	for _, p := range m.Problems {
		fmt.Fprintf(w, "          problem %s: %s: %s\n", p.Time.Local().Format(time.DateTime), p.What, p.Error)
	}
}

// ago prints a past time the way a status line wants it.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// embedsNext says what embeds the drawers that have no vector yet: any
// mine, and the manager's first at its start (a manager already running
// without the model loads it only when restarted).
func embedsNext(running bool) string {
	if running {
		return "the running manager's next mine (or its restart, if it started without the model)"
	}
	return "the next `hivemem mine` or `hivemem run`"
}
