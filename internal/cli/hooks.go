package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hookinstall"
)

// Time bounds of the hooks: an agent waits for them, so a hook gives up
// (with a warning, exit 0) rather than hold a session up. The timeouts
// written into the agent's settings are a little longer, so that hivemem
// stops first.
const (
	sessionStartBound = 10 * time.Second
	saveBound         = 50 * time.Second
	stdinBound        = 5 * time.Second
	maxHookInput      = 1 << 20
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

// hookInput is what Claude Code and Codex send a command hook on stdin.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"`
}

type hookOptions struct {
	agent, format string
	budget        int
}

func newHookCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "What the installed hooks run (never fails the agent: a problem is a warning, exit 0)",
	}
	var o hookOptions
	start := leafCommand("session-start", "Print the agent's wake-up digest as the session's added context (hook JSON output)", cobra.ArbitraryArgs,
		func(ctx context.Context, _ []string) error {
			runHookSessionStart(ctx, g, o)
			return nil
		})
	start.Flags().IntVar(&o.budget, "budget", 0, "token budget of the digest (default search.wake_up_budget)")
	save := leafCommand("save", "Import the transcript named by the hook JSON on stdin into the agent's sessions", cobra.ArbitraryArgs,
		func(ctx context.Context, _ []string) error {
			runHookSave(ctx, g, o)
			return nil
		})
	save.Flags().StringVar(&o.format, "format", "auto", "transcript format: an import format, or auto (detected per file)")
	for _, c := range []*cobra.Command{start, save} {
		c.Flags().StringVar(&o.agent, "agent", "", "agent id (default $HIVEMEM_AGENT)")
		// A hook must not fail on a flag a later version adds.
		c.FParseErrWhitelist.UnknownFlags = true
	}
	cmd.AddCommand(start, save)
	// A hook of a later version (or a typo in the agent's settings) must
	// not fail the agent either: it is a warning on stderr, exit 0, and
	// nothing on stdout, which an agent may take as the session's context.
	cmd.FParseErrWhitelist.UnknownFlags = true
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		hookWarn(g, nil, args[0], "", unknownSubcommand(cmd, args[0]))
		return nil
	}
	return cmd
}

// readHookInput reads the hook's JSON from stdin, giving up after
// stdinBound; no input (a terminal, an empty stdin) is an empty input.
func readHookInput(ctx context.Context, r io.Reader) (hookInput, error) {
	var in hookInput
	if r == nil || isTerminal(r) {
		return in, nil
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
		ch <- result{b, err}
	}()
	var res result
	select {
	case res = <-ch:
	case <-time.After(stdinBound):
		return in, errors.New("no hook input on stdin within " + stdinBound.String())
	case <-ctx.Done():
		return in, ctx.Err()
	}
	if res.err != nil {
		return in, fmt.Errorf("read hook input: %w", res.err)
	}
	if len(res.b) > maxHookInput {
		return in, fmt.Errorf("hook input is over %d bytes", maxHookInput)
	}
	if len(bytes.TrimSpace(res.b)) == 0 {
		return in, nil
	}
	if err := json.Unmarshal(res.b, &in); err != nil {
		return in, fmt.Errorf("hook input is not the JSON object the agent sends: %w", err)
	}
	return in, nil
}

// hookWarn logs a hook's problem: a warning on stderr, and a hook-error
// event in the home's log, a (when open) or the home --home names (when it
// exists: a hook creates no home to log in); the hook still exits 0.
func hookWarn(g *globals, a *app.App, hook, agent string, err error) {
	warn := func(msg string) {
		if g.logger != nil {
			g.logger.Warn("hivemem hook "+hook+": "+msg, "agent", agent)
		}
	}
	warn(err.Error())
	var lerr error
	if a != nil {
		lerr = a.HookError(hook, agent, err)
	} else {
		lerr = app.HomeHookError(g.home, hook, agent, err)
	}
	// With no home the problem itself said so: no second line for it.
	if lerr != nil && !(errors.Is(lerr, app.ErrNoHome) && errors.Is(err, app.ErrNoHome)) {
		warn("not logged as a hook-error event: " + lerr.Error())
	}
}

// hookStart is how every hook begins: it reads the hook's input and
// resolves the agent it acts for (--agent, else $HIVEMEM_AGENT), warning
// of each problem. A hook that needs no input goes on without it; ok is
// false when the hook cannot go on.
func hookStart(ctx context.Context, g *globals, hook, agentFlag string, needInput bool) (in hookInput, agent string, ok bool) {
	in, err := readHookInput(ctx, g.stdin)
	if err != nil {
		hookWarn(g, nil, hook, agentFlag, err)
		if needInput {
			return in, "", false
		}
	}
	agent, err = agentOrEnv(agentFlag)
	if err == nil {
		err = home.ValidateAgentID(agent)
	}
	if err != nil {
		hookWarn(g, nil, hook, agentFlag, err)
		return in, "", false
	}
	return in, agent, true
}

// guard turns a panic into a warning: nothing a hook meets may fail the agent.
func guard(g *globals, hook string) {
	if r := recover(); r != nil {
		hookWarn(g, nil, hook, "", fmt.Errorf("internal error: %v (please report this bug)", r))
	}
}

func runHookSessionStart(ctx context.Context, g *globals, o hookOptions) {
	defer guard(g, "session-start")
	ctx, cancel := context.WithTimeout(ctx, sessionStartBound)
	defer cancel()
	in, agent, ok := hookStart(ctx, g, "session-start", o.agent, false)
	if !ok {
		return
	}
	a, err := g.open(ctx, false)
	if err != nil {
		hookWarn(g, nil, "session-start", agent, err)
		return
	}
	defer a.Close()
	text, err := a.SessionContext(ctx, app.SessionContextRequest{Agent: agent, Budget: max(o.budget, 0)})
	if err != nil {
		hookWarn(g, a, "session-start", agent, err)
	}
	if text == "" {
		return
	}
	event := in.HookEventName
	if event == "" {
		event = "SessionStart"
	}
	out := map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "additionalContext": text}}
	if err := writeJSON(g.stdout, out); err != nil {
		hookWarn(g, a, "session-start", agent, err)
	}
}

func runHookSave(ctx context.Context, g *globals, o hookOptions) {
	defer guard(g, "save")
	ctx, cancel := context.WithTimeout(ctx, saveBound)
	defer cancel()
	in, agent, ok := hookStart(ctx, g, "save", o.agent, true)
	if !ok {
		return
	}
	if in.TranscriptPath == "" {
		hookWarn(g, nil, "save", agent, errors.New("the hook input names no transcript_path: nothing to save"))
		return
	}
	req := app.ImportRequest{Agent: agent, Format: o.format, Paths: []string{in.TranscriptPath}, Transcript: true}
	if err := req.Validate(); err != nil { // before the home is made for it
		hookWarn(g, nil, "save", agent, err)
		return
	}
	a, err := g.open(ctx, true)
	if err != nil {
		hookWarn(g, nil, "save", agent, err)
		return
	}
	defer a.Close()
	res, err := a.Import(ctx, req)
	if err != nil {
		hookWarn(g, a, "save", agent, err)
		return
	}
	if res.MineErr != nil {
		hookWarn(g, a, "save", agent, fmt.Errorf("saved, not indexed yet: %w", res.MineErr))
	}
	for _, s := range res.Sessions {
		fmt.Fprintf(g.stderr, "hivemem: saved %d new turns of session %s to %s\n", s.TurnsAdded, in.SessionID, a.Home.Rel(s.Path))
	}
	if r := (app.Redaction{Redacted: res.Redacted, Kept: res.SecretsKept}); r.Any() {
		fmt.Fprintf(g.stderr, "hivemem: %s\n", r)
	}
	if res.Purged > 0 {
		fmt.Fprintln(g.stderr, "hivemem: "+purgedNote(res.Purged))
	}
}
