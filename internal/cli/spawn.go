package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
)

type spawnOptions struct {
	name       string
	wakeUpFile string
}

func newSpawnCommand(g *globals) *cobra.Command {
	var o spawnOptions
	cmd := &cobra.Command{
		Use:   "spawn <agent> [--name N] [--wake-up-file F] -- <command> [args...]",
		Short: "Start an agent with its memory: create its memory.md if needed, set its environment, run it",
		Long: `Start an agent process with its memory.

The agent's directory and memory.md are created from the template when
missing (--name is the display name in its header, default the id). The
command runs with HIVEMEM_HOME, HIVEMEM_AGENT, MEMPALACE_PALACE_PATH and
MEMPALACE_EMBEDDING_MODEL set (see ` + "`hivemem env`" + `); with --wake-up-file, the
agent's wake-up digest is written to that file first and HIVEMEM_WAKE_UP_FILE
names it. When the command ends (however it ends), the agent's directory
is mined before spawn returns, so what it wrote is searchable at once
(unless manager.mining is false). SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are passed on to the
command, and spawn exits with its status (128+n when a signal n killed it).
A SIGINT or SIGHUP that a terminal sent to its whole foreground process group
already reached the command and is not sent twice.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The command's own flags must not be taken for spawn's, so it
			// goes after "--".
			if dash := cmd.ArgsLenAtDash(); dash != 1 {
				return errors.New("spawn: usage: hivemem spawn <agent> [--name N] [--wake-up-file F] -- <command> [args...]")
			}
			return runSpawn(cmd.Context(), g, o, args[0], args[1:])
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "display name for a new memory file's header (default: the agent id)")
	cmd.Flags().StringVar(&o.wakeUpFile, "wake-up-file", "", "write the agent's wake-up digest to this file before starting it")
	return cmd
}

// Exit statuses of spawn itself, as shells use them.
const (
	exitCannotRun = 126
	exitNotFound  = 127
)

func runSpawn(ctx context.Context, g *globals, o spawnOptions, agent string, argv []string) error {
	if err := home.ValidateAgentID(agent); err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	h, cfg, err := g.homeConfig()
	if err != nil {
		return err
	}
	if err := createAgent(ctx, g, agent, o.name); err != nil {
		return err
	}
	env := agentEnv(h, cfg, agent)
	if o.wakeUpFile != "" {
		abs, err := filepath.Abs(o.wakeUpFile)
		if err != nil {
			return fmt.Errorf("spawn: --wake-up-file: %w", err)
		}
		if err := writeWakeUp(ctx, g, agent, abs); err != nil {
			return err
		}
		env["HIVEMEM_WAKE_UP_FILE"] = abs
	}

	bin, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(g.stderr, "hivemem: spawn: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitError{exitNotFound}
		}
		return exitError{exitCannotRun}
	}
	child := exec.Command(bin, argv[1:]...)
	child.Args[0] = argv[0]
	child.Env = mergeEnv(os.Environ(), env)
	child.Stdin, child.Stdout, child.Stderr = g.stdin, g.stdout, g.stderr

	// Catch the signals before the child exists, so none is lost between
	// its start and the forwarding loop.
	sigs := make(chan os.Signal, 8)
	if len(forwardedSignals) > 0 { // Notify with no signals would relay all of them
		signal.Notify(sigs, forwardedSignals...)
		defer signal.Stop(sigs)
	}
	if err := child.Start(); err != nil {
		fmt.Fprintf(g.stderr, "hivemem: spawn: start %s: %v\n", argv[0], err)
		return exitError{exitCannotRun}
	}
	g.logger.Debug("spawned agent", "agent", agent, "pid", child.Process.Pid, "command", argv[0])
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if terminalSentIt(sig) {
					continue
				}
				if err := child.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
					g.logger.Warn("spawn: forward signal", "signal", sig.String(), "err", err)
				}
			}
		}
	}()
	// ctx ends on SIGINT/SIGTERM too, but those are the child's to act on:
	// spawn waits for it whatever it decides.
	werr := child.Wait()
	close(done)
	mineAtExit(ctx, g, h, agent)
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return fmt.Errorf("spawn: wait for %s: %w", argv[0], werr)
		}
	}
	if code := exitStatus(child.ProcessState); code != 0 {
		return exitError{code}
	}
	return nil
}

// exitMineTimeout bounds the mine spawn does after the agent exits.
const exitMineTimeout = 2 * time.Minute

// mineAtExit mines the agent's directory once its process has ended, so
// its last notes are in the index when spawn returns. It runs even when
// spawn was interrupted (the agent decided how to end), and a failure is
// a warning: the agent's exit status is what spawn reports.
func mineAtExit(ctx context.Context, g *globals, h home.Home, agent string) {
	if cfg, err := config.Load(h.ConfigPath()); err == nil && !cfg.Manager.Mining {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitMineTimeout)
	defer cancel()
	_, err := request(ctx, g, (*app.App).Mine, app.MineRequest{Agent: agent})
	if err != nil {
		fmt.Fprintf(g.stderr, "hivemem: spawn: warning: mining %s after it exited: %v\n", agent, err)
	}
}

// createAgent gives the agent its directory and memory.md, from the
// template when missing (an existing file is left as it is). The app is
// opened as for a write: a damaged index does not stop the agent.
func createAgent(ctx context.Context, g *globals, agent, name string) error {
	a, err := g.openForWrite(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := a.CreateAgent(ctx, app.CreateAgentRequest{Agent: agent, Name: name}); err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	return nil
}

// writeWakeUp mines the agent's file (so a new or changed file is in the
// index) and writes its wake-up digest to dest.
func writeWakeUp(ctx context.Context, g *globals, agent, dest string) error {
	if _, err := request(ctx, g, (*app.App).WriteWakeUpFile, app.WakeUpFileRequest{Agent: agent, Path: dest}); err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	return nil
}

// mergeEnv overrides base (KEY=VALUE entries) with set, in a stable order.
func mergeEnv(base []string, set map[string]string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}
