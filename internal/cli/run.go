package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/httpguard"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/mcpserver"
	"github.com/hivemem/hivemem/internal/web"
	"github.com/hivemem/hivemem/internal/wiring"
)

type runOptions struct {
	http string
}

func newRunCommand(g *globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the memory manager: watch memory files, mine changes, condense on schedule, serve HTTP",
		Long: `Run the always-on memory manager for the home.

It watches hive/agents/*/memory.md and mines a changed file within about
0.3 s of its last write (manager.debounce, 300ms; plus a full scan every manager.scan_interval as a
safety net), runs the reflector every reflector.interval, and serves HTTP on
--http (default manager.http, 127.0.0.1:7777; "off" serves nothing). A
non-loopback address needs manager.token.

While it runs it is the one writer to the palace: CLI commands that write
wait for the palace write lock it takes around each mine. SIGINT/SIGTERM stop
it within a few seconds; SIGHUP (or saving config.toml) reloads the settings.
A second run on the same home is refused with the running one's pid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The manager's log is its output: default to info, not warn.
			if !cmd.Flags().Changed("log-level") {
				lg, err := newLogger(g.stderr, "info", g.logFormat)
				if err != nil {
					return err
				}
				g.logger = lg
			}
			return runRun(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.http, "http", "", `listen address (default manager.http, 127.0.0.1:7777); "off" disables HTTP`)
	return cmd
}

func runRun(ctx context.Context, g *globals, o runOptions) error {
	// Catch SIGHUP from the start: its default action would end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	h, _, err := g.homeConfig()
	if err != nil {
		return err
	}
	// Claim the home before opening the index, so a refused second run
	// touches nothing.
	claim, err := manager.NewClaim(h, Version)
	if err != nil {
		return err
	}
	defer func() {
		if err := claim.Release(); err != nil {
			g.logger.Warn("release the home", "err", err)
		}
	}()
	g.ensureModel(ctx)
	a, err := g.openWith(ctx, wiring.Options{Home: h.Root, Logger: g.logger, LongRunning: true, Command: "run"})
	if err != nil {
		return err
	}
	defer a.Close()
	m, err := manager.New(manager.Options{
		App: a, Claim: claim, HTTP: o.http, Logger: g.logger, Version: Version,
		Handler: serveHandlers,
		Ready: func(addr string) {
			where := "HTTP off"
			if addr != "" {
				where = "http://" + addr
			}
			fmt.Fprintf(g.stdout, "hivemem run: managing %s (pid %d, %s)\n", h.Root, os.Getpid(), where)
		},
	})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for {
			select {
			case <-runCtx.Done():
				return
			case <-hup:
				g.logger.Info("SIGHUP: reloading config")
				m.Reload()
			}
		}
	}()
	return m.Run(runCtx)
}

// serveHandlers is what `hivemem run` serves besides the manager's
// /healthz: the MCP endpoint (/mcp) and the web UI with the whole JSON API
// (/ and /api/v1 under it, the manager's status at /api/v1/manager and
// inside /api/v1/status). Both share the app's reflector and palace write
// lock and live settings, and the manager's status, and apply guard
// themselves (the UI keeps /login and /static reachable without a token).
func serveHandlers(m *manager.Manager, guard httpguard.Config) (http.Handler, error) {
	a := m.App()
	h, err := mcpserver.HTTPHandler(mcpserver.Deps{App: a, Logger: a.Logger(), Version: Version}, guard)
	if err != nil {
		return nil, fmt.Errorf("mount /mcp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	w := web.New(web.Deps{App: a,
		ManagerStatus: m.Status,
		Guard:         &guard, Logger: a.Logger(), Version: Version})
	m.OnShutdown(w.Close)
	mux.Handle("/", w)
	return mux, nil
}

// lockWaiting tells the user why a write command pauses.
func (g *globals) lockWaiting(h app.LockHolder) {
	fmt.Fprintf(g.stderr, "waiting for the palace write lock held by %s…\n", h)
}
