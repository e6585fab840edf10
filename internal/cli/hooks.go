package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/hookinstall"
)

type hooksOptions struct {
	agent, project, command string
	user                    bool
}

func newHooksCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove the hooks that wake an agent up with its memory and save its sessions",
	}
	var o hooksOptions
	install := leafCommand("install <claude-code|codex>", "Merge hivemem's hooks into the agent's settings (backed up first; idempotent)", cobra.ExactArgs(1),
		func(ctx context.Context, args []string) error { return runHooks(ctx, g, args[0], o, true) })
	install.Long = "claude-code: <project>/.claude/settings.json, or ~/.claude/settings.json with --user:\n" +
		"  SessionStart → hivemem hook session-start (the wake-up digest as added context)\n" +
		"  PreCompact, SessionEnd → hivemem hook save (imports the transcript)\n" +
		"codex: <project>/.codex/hooks.json, or $CODEX_HOME/hooks.json (~/.codex) with --user:\n" +
		"  SessionStart → session-start; PreCompact, Stop → save\n" +
		"Other hooks in the file are left as they are."
	install.Flags().StringVar(&o.agent, "agent", "", "agent id written into the hooks (default: $HIVEMEM_AGENT when the hook runs)")
	install.Flags().StringVar(&o.command, "command", "", "the hivemem binary the hooks run (default: this one)")
	uninstall := leafCommand("uninstall <claude-code|codex>", "Remove the hooks hivemem installed, and nothing else", cobra.ExactArgs(1),
		func(ctx context.Context, args []string) error { return runHooks(ctx, g, args[0], o, false) })
	for _, c := range []*cobra.Command{install, uninstall} {
		c.Flags().StringVar(&o.project, "project", "", "project directory (default: the current one)")
		c.Flags().BoolVar(&o.user, "user", false, "the user's settings instead of a project's")
		c.MarkFlagsMutuallyExclusive("project", "user")
	}
	cmd.AddCommand(install, uninstall)
	return groupCommand(cmd)
}

// runHooks installs or removes the hooks of one agent program and says
// what it did.
func runHooks(ctx context.Context, g *globals, target string, o hooksOptions, install bool) error {
	opts := hookinstall.Options{Project: o.project, User: o.user}
	do, verb := hookinstall.Uninstall, "removed"
	if install {
		opts.Agent, opts.Command, opts.Home = o.agent, o.command, g.home
		do, verb = hookinstall.Install, "installed"
	}
	res, err := do(ctx, hookinstall.Target(target), opts)
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	switch {
	case res.Changed:
		fmt.Fprintf(g.stdout, "%s hivemem hooks in %s (%s)\n", verb, res.Path, strings.Join(res.Events, ", "))
		if res.Backup != "" {
			fmt.Fprintf(g.stdout, "backup: %s\n", res.Backup)
		}
	case install:
		fmt.Fprintf(g.stdout, "hivemem hooks already installed in %s\n", res.Path)
	default:
		fmt.Fprintf(g.stdout, "no hivemem hooks in %s\n", res.Path)
	}
	return nil
}
