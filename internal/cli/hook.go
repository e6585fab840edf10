package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/home"
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
	budgetGiven   bool // --budget was given: 0 is refused, as by wake-up
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
	start.Flags().IntVar(&o.budget, "budget", 0, "token budget of the digest, 1 to 100000 (default search.wake_up_budget)")
	given(start, "budget", &o.budgetGiven)
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
	// A budget wake-up refuses is refused alike (a warning), and the
	// session still starts with the default digest.
	req := app.SessionContextRequest{Agent: agent, Budget: o.budget, BudgetGiven: o.budgetGiven}
	budgetErr := req.Validate()
	if budgetErr != nil {
		req.Budget, req.BudgetGiven = 0, false
	}
	a, err := g.open(ctx, false)
	if err != nil {
		hookWarn(g, nil, "session-start", agent, err)
		return
	}
	defer a.Close()
	if budgetErr != nil {
		hookWarn(g, a, "session-start", agent, budgetErr)
	}
	text, err := a.SessionContext(ctx, req)
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
		fmt.Fprintf(g.stderr, "hivemem: saved %d new turns of session %s to %s\n", s.TurnsAdded, in.SessionID, a.Home().Rel(s.Path))
	}
	if r := (app.Redaction{Redacted: res.Redacted, Kept: res.SecretsKept}); r.Any() {
		fmt.Fprintf(g.stderr, "hivemem: %s\n", r)
	}
	if res.Purged > 0 {
		fmt.Fprintln(g.stderr, "hivemem: "+purgedNote(res.Purged))
	}
}
