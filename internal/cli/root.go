// Package cli is hivemem's command line: one newXCommand per command that
// binds flags into an options struct, and a runX function that does the
// work and is what tests call.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/wiring"
)

// globals are the flags every command shares.
type globals struct {
	home      string
	logLevel  string
	logFormat string
	stdout    io.Writer
	stderr    io.Writer
	stdin     io.Reader
	logger    *slog.Logger
	// mempalace is set when the binary answers as MemPalace's CLI, whose
	// forms keep MemPalace's behaviour where hivemem's differ.
	mempalace bool
	// modelChecked is set once ensureModel has run in this process.
	modelChecked bool
	// command is the name of the command running, which holds the palace
	// write lock as "hivemem <command>".
	command string
	// loaded is the home and its config once homeConfig has loaded them:
	// the app this command opens uses the same (config.toml read once).
	loaded *loadedHome
}

// loadedHome is a resolved home and the config loaded from it.
type loadedHome struct {
	h   home.Home
	cfg config.Config
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr, stdin: stdin}
	return execute(ctx, newRootCommand(g), "hivemem", args, stdin, stdout, stderr)
}

// execute runs a command tree and turns its error into an exit code,
// printing it prefixed with the program name.
func execute(ctx context.Context, root *cobra.Command, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	withUsage(root)
	root.SetFlagErrorFunc(flagError)
	root.SetArgs(textAfterDash(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, prog+":", err)
	return exitCode(err)
}

// exitFailure is the exit status of a command that failed or was refused.
const exitFailure = 1

// exitCode is the one place the CLI maps the app's error kinds
// (app.Kind) onto exit statuses, as restic's exit-code switch does: bad
// input, not found, conflict, unavailable and any other failure all exit
// 1, as they always have (scripts test for non-zero). The statuses of
// their own are a child's (spawn: 126, 127, or the child's) and scan's
// secrets found (3), which carry them as exitError.
func exitCode(err error) int {
	switch app.Kind(err) {
	case app.ErrInvalid, app.ErrNotFound, app.ErrConflict, app.ErrUnavailable:
		return exitFailure
	}
	return exitFailure
}

// withUsage makes every argument error of cmd and its subcommands name the
// command's usage line: cobra's own ("requires at least 1 arg(s), only
// received 0") does not say what the arguments are.
func withUsage(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		withUsage(c)
	}
	check := cmd.Args
	if check == nil {
		return
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		return withUsageLine(c, check(c, args))
	}
}

// exitError carries a child's exit status (spawn) without printing.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCommand(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "hivemem",
		Short:         "Persistent, searchable long-term memory for teams of AI agents",
		Long:          "hivemem mines agents' memory.md files into a searchable palace (BM25 + vectors), gives new sessions a wake-up digest, and keeps memory files bounded without losing a line.",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			g.command = cmd.Name()
			if err := checkNonEmpty(cmd); err != nil {
				return withUsageLine(cmd, err)
			}
			return withUsageLine(cmd, g.setLogger())
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.home, "home", "", "hivemem home directory (default $HIVEMEM_HOME, else ~/.local/share/hivemem)")
	g.logFlags(pf)
	root.AddCommand(
		newInitCommand(g),
		newMineCommand(g),
		newSearchCommand(g),
		newWakeUpCommand(g),
		newStatusCommand(g),
		newRememberCommand(g),
		newPinCommand(g),
		newUnpinCommand(g),
		newForgetCommand(g),
		newPurgeCommand(g),
		newScanCommand(g),
		newImportCommand(g),
		newHooksCommand(g),
		newHookCommand(g),
		newReindexCommand(g),
		newMigrateCommand(g),
		newReflectCommand(g),
		newBackupsCommand(g),
		newRestoreCommand(g),
		newEnvCommand(g),
		newRunCommand(g),
		newSpawnCommand(g),
		newModelCommand(g),
		newBenchCommand(g),
		newInstructionsCommand(g),
		newMCPCommand(g),
		newVersionCommand(g),
	)
	return root
}

// logFlags adds --log-level and --log-format, shared by both command sets.
func (g *globals) logFlags(pf *pflag.FlagSet) {
	pf.StringVar(&g.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
}

// setLogger builds the logger from the parsed flags.
func (g *globals) setLogger() error {
	lg, err := newLogger(g.stderr, g.logLevel, g.logFormat)
	if err != nil {
		return err
	}
	g.logger = lg
	return nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	o := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// leafCommand is a command that checks its positional arguments with args
// and runs run with the command's context and those arguments; the caller
// adds its flags (and Long).
func leafCommand(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, args []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), args) }}
}

// noArgsCommand is a leafCommand that takes no arguments.
func noArgsCommand(use, short string, run func(ctx context.Context) error) *cobra.Command {
	return leafCommand(use, short, cobra.NoArgs, func(ctx context.Context, _ []string) error { return run(ctx) })
}

// jsonFlag adds --json (print JSON instead of text) to cmd.
func jsonFlag(cmd *cobra.Command, asJSON *bool) {
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}

// jsonCommand is a leafCommand whose only flag is --json, which run is
// given.
func jsonCommand(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, args []string, asJSON bool) error) *cobra.Command {
	var asJSON bool
	cmd := leafCommand(use, short, args, func(ctx context.Context, args []string) error { return run(ctx, args, asJSON) })
	jsonFlag(cmd, &asJSON)
	return cmd
}

// requireHome refuses a home that does not exist (app.NoHome).
func (g *globals) requireHome() error {
	_, err := g.existingHome()
	return err
}

// existingHome resolves --home and refuses one that does not exist
// (app.NoHome).
func (g *globals) existingHome() (home.Home, error) {
	h, err := home.Resolve(g.home)
	if err != nil {
		return home.Home{}, err
	}
	if !h.Exists() {
		return home.Home{}, app.NoHome(h)
	}
	return h, nil
}

// homeConfig is existingHome with the home's config loaded, for the
// commands that read the config before or without opening the palace. It
// is loaded once per command: the app opened after it uses the same.
func (g *globals) homeConfig() (home.Home, config.Config, error) {
	if g.loaded != nil {
		return g.loaded.h, g.loaded.cfg, nil
	}
	h, cfg, err := wiring.LoadHome(g.home, false)
	if err != nil {
		return h, config.Config{}, err
	}
	g.loaded = &loadedHome{h: h, cfg: cfg}
	return h, cfg, nil
}

// anyConfig is homeConfig's config, and for a home not made yet (init
// comes next) the config at its path, or the defaults.
func (g *globals) anyConfig() (config.Config, error) {
	h, cfg, err := g.homeConfig()
	if errors.Is(err, app.ErrNoHome) {
		return config.Load(h.ConfigPath())
	}
	return cfg, err
}

func (g *globals) open(ctx context.Context, create bool) (*app.App, error) {
	return g.openWith(ctx, wiring.Options{Home: g.home, Logger: g.logger, Create: create, Command: g.command, LockWaiting: g.lockWaiting})
}

// openWith opens the app with opts, over the home and config homeConfig
// loaded when it has, so that a command reads config.toml once.
func (g *globals) openWith(ctx context.Context, opts wiring.Options) (*app.App, error) {
	if g.loaded != nil {
		return wiring.OpenLoaded(ctx, g.loaded.h, g.loaded.cfg, opts)
	}
	h, cfg, err := wiring.LoadHome(opts.Home, opts.Create)
	if err != nil {
		return nil, err
	}
	g.loaded = &loadedHome{h: h, cfg: cfg}
	return wiring.OpenLoaded(ctx, h, cfg, opts)
}

// request opens the app, makes one request of it with op and closes it
// again: all a command does with the app when only op's result is
// printed.
func request[Req, Res any](ctx context.Context, g *globals, op func(*app.App, context.Context, Req) (Res, error), req Req) (Res, error) {
	a, err := g.open(ctx, false)
	if err != nil {
		var zero Res
		return zero, err
	}
	defer a.Close()
	return op(a, ctx, req)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether rw (a reader or a writer) is a terminal: for
// progress bars, and for a hook's stdin that nothing pipes into.
func isTerminal(rw any) bool {
	f, ok := rw.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
