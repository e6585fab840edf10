package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/atomicio"
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

// hookTarget is an agent program whose hooks hivemem installs.
type hookTarget struct {
	dir    string        // directory under the project or the user's home: .claude, .codex
	file   string        // settings file in it
	format string        // its transcripts' format, for hook save
	events []hookEvent   // in order
	user   func() string // the user-level directory
}

type hookEvent struct {
	name    string // the agent's event name
	sub     string // hivemem hook subcommand: session-start or save
	timeout int    // seconds, written into the settings
}

var hookTargets = map[string]hookTarget{
	// Claude Code: hooks in settings.json; SessionStart's added context
	// goes in hookSpecificOutput.additionalContext.
	"claude-code": {dir: ".claude", file: "settings.json", format: "claude-code", events: []hookEvent{
		{"SessionStart", "session-start", 15}, {"PreCompact", "save", 60}, {"SessionEnd", "save", 60},
	}, user: func() string { return filepath.Join(userHome(), ".claude") }},
	// Codex: the same hook shape in hooks.json (CODEX_HOME, default
	// ~/.codex); it has no SessionEnd, so the session is saved at every
	// Stop (the end of each turn: an import appends only new turns).
	"codex": {dir: ".codex", file: "hooks.json", format: "codex", events: []hookEvent{
		{"SessionStart", "session-start", 15}, {"PreCompact", "save", 60}, {"Stop", "save", 60},
	}, user: func() string {
		if d := os.Getenv("CODEX_HOME"); d != "" {
			return d
		}
		return filepath.Join(userHome(), ".codex")
	}},
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}

func hookTargetNames() string { return "claude-code or codex" }

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
		func(_ context.Context, args []string) error { return runHooks(g, args[0], o, true) })
	install.Long = "claude-code: <project>/.claude/settings.json, or ~/.claude/settings.json with --user:\n" +
		"  SessionStart → hivemem hook session-start (the wake-up digest as added context)\n" +
		"  PreCompact, SessionEnd → hivemem hook save (imports the transcript)\n" +
		"codex: <project>/.codex/hooks.json, or $CODEX_HOME/hooks.json (~/.codex) with --user:\n" +
		"  SessionStart → session-start; PreCompact, Stop → save\n" +
		"Other hooks in the file are left as they are."
	install.Flags().StringVar(&o.agent, "agent", "", "agent id written into the hooks (default: $HIVEMEM_AGENT when the hook runs)")
	install.Flags().StringVar(&o.command, "command", "", "the hivemem binary the hooks run (default: this one)")
	uninstall := leafCommand("uninstall <claude-code|codex>", "Remove the hooks hivemem installed, and nothing else", cobra.ExactArgs(1),
		func(_ context.Context, args []string) error { return runHooks(g, args[0], o, false) })
	for _, c := range []*cobra.Command{install, uninstall} {
		c.Flags().StringVar(&o.project, "project", "", "project directory (default: the current one)")
		c.Flags().BoolVar(&o.user, "user", false, "the user's settings instead of a project's")
		c.MarkFlagsMutuallyExclusive("project", "user")
	}
	cmd.AddCommand(install, uninstall)
	return groupCommand(cmd)
}

func runHooks(g *globals, target string, o hooksOptions, install bool) error {
	t, ok := hookTargets[target]
	if !ok {
		return fmt.Errorf("hooks: unknown agent program %q (want %s)", target, hookTargetNames())
	}
	dir := filepath.Join(o.project, t.dir)
	switch {
	case o.user:
		dir = t.user()
	case o.project == "":
		dir = t.dir
	default:
		if st, err := os.Stat(o.project); err != nil || !st.IsDir() {
			return fmt.Errorf("hooks: project directory %s does not exist", o.project)
		}
	}
	path, err := filepath.Abs(filepath.Join(dir, t.file))
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	var commands map[string]string
	if install {
		if o.agent != "" {
			if err := home.ValidateAgentID(o.agent); err != nil {
				return fmt.Errorf("hooks: %w", err)
			}
		}
		commands, err = hookCommands(g, t, o)
		if err != nil {
			return fmt.Errorf("hooks: %w", err)
		}
	}
	doc, old, err := readSettings(path)
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	before, _ := json.Marshal(doc)
	var changed []string
	if install {
		changed, err = mergeHooks(doc, t, commands)
	} else {
		changed, err = removeHooks(doc)
	}
	if err != nil {
		return fmt.Errorf("hooks: %s: %w", path, err)
	}
	after, _ := json.Marshal(doc)
	if bytes.Equal(before, after) {
		if install {
			fmt.Fprintf(g.stdout, "hivemem hooks already installed in %s\n", path)
		} else {
			fmt.Fprintf(g.stdout, "no hivemem hooks in %s\n", path)
		}
		return nil
	}
	backup, err := writeSettings(path, old, doc)
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	verb := "installed"
	if !install {
		verb = "removed"
	}
	fmt.Fprintf(g.stdout, "%s hivemem hooks in %s (%s)\n", verb, path, strings.Join(changed, ", "))
	if backup != "" {
		fmt.Fprintf(g.stdout, "backup: %s\n", backup)
	}
	return nil
}

// hookCommands is the command line of each hook subcommand.
func hookCommands(g *globals, t hookTarget, o hooksOptions) (map[string]string, error) {
	bin := o.command
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("cannot find this binary (pass --command): %w", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		bin = exe
	}
	if base := strings.ToLower(filepath.Base(bin)); !strings.Contains(base, "hivemem") {
		return nil, fmt.Errorf("--command %s: the binary's name must contain \"hivemem\" (that is how uninstall tells hivemem's hooks from others)", bin)
	}
	args := ""
	if o.agent != "" {
		args += " --agent " + shellQuote(o.agent)
	}
	if g.home != "" {
		h, err := filepath.Abs(g.home)
		if err != nil {
			return nil, err
		}
		args += " --home " + shellQuote(h)
	}
	out := map[string]string{}
	for _, e := range t.events {
		out[e.sub] = shellQuote(bin) + " hook " + e.sub + args
		if e.sub == "save" {
			out[e.sub] += " --format " + t.format
		}
	}
	return out, nil
}

// readSettings reads a JSON settings file as a generic document (numbers
// kept as written); a missing or empty file is an empty document.
func readSettings(path string) (map[string]any, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, nil, fmt.Errorf("%s is not a JSON object (%v): fix it or move it away; nothing was changed", path, err)
	}
	return doc, data, nil
}

// writeSettings backs the old file up beside it (when there was one) and
// swaps the new document in atomically.
func writeSettings(path string, old []byte, doc map[string]any) (backup string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if old != nil {
		// Never over an earlier backup (two installs in one second).
		base := path + ".hivemem-backup-" + time.Now().UTC().Format("20060102T150405Z")
		backup = base
		for i := 2; ; i++ {
			if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
				break
			}
			backup = fmt.Sprintf("%s-%d", base, i)
		}
		if err := atomicio.WriteFile(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return backup, atomicio.WriteFile(path, buf.Bytes(), 0o644)
}

// isHivememHook recognises a hook command hivemem installs: a binary
// whose name contains "hivemem", then "hook session-start" or "hook save".
// Other programs' hooks, even ones that mention hivemem, are not ours.
func isHivememHook(command string) bool {
	bin, rest := firstShellWord(strings.TrimSpace(command))
	base := strings.ToLower(bin[strings.LastIndexAny(bin, `/\`)+1:])
	if !strings.Contains(base, "hivemem") {
		return false
	}
	f := strings.Fields(rest)
	return len(f) >= 2 && f[0] == "hook" && (f[1] == "session-start" || f[1] == "save")
}

// firstShellWord splits off a command line's first word, undoing the
// quoting shellQuote (and a user) may have used: '…', "…" and \x.
func firstShellWord(s string) (word, rest string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			return b.String(), s[i:]
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return b.String() + s[i+1:], ""
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return b.String() + s[i+1:], ""
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// hookGroups returns settings.hooks[event] as a list, checking the shape.
func hookGroups(hooks map[string]any, event string) ([]any, error) {
	v, ok := hooks[event]
	if !ok {
		return nil, nil
	}
	groups, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("hooks.%s is not a list", event)
	}
	return groups, nil
}

// dropOurs removes hivemem's hooks from an event's groups (and groups left
// empty by that); it reports whether the exact command was there, alone.
func dropOurs(groups []any, keep string) (out []any, hadExact bool, err error) {
	for _, gr := range groups {
		m, ok := gr.(map[string]any)
		if !ok {
			out = append(out, gr)
			continue
		}
		list, ok := m["hooks"].([]any)
		if !ok {
			out = append(out, gr)
			continue
		}
		var rest []any
		for _, h := range list {
			hm, ok := h.(map[string]any)
			cmd, _ := hm["command"].(string)
			if ok && isHivememHook(cmd) {
				if cmd == keep && keep != "" {
					hadExact = true
				}
				continue
			}
			rest = append(rest, h)
		}
		if len(rest) == len(list) {
			out = append(out, gr)
			continue
		}
		if len(rest) > 0 {
			cp := map[string]any{}
			for k, v := range m {
				cp[k] = v
			}
			cp["hooks"] = rest
			out = append(out, cp)
		}
	}
	return out, hadExact, nil
}

func settingsHooks(doc map[string]any) (map[string]any, error) {
	v, ok := doc["hooks"]
	if !ok {
		return nil, nil
	}
	hooks, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`"hooks" is not an object`)
	}
	return hooks, nil
}

// mergeHooks adds hivemem's hook to each of the target's events, replacing
// an older hivemem hook there; an event that has exactly this hook already
// is left alone (so installing twice changes nothing).
func mergeHooks(doc map[string]any, t hookTarget, commands map[string]string) ([]string, error) {
	hooks, err := settingsHooks(doc)
	if err != nil {
		return nil, err
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	var changed []string
	for _, e := range t.events {
		groups, err := hookGroups(hooks, e.name)
		if err != nil {
			return nil, err
		}
		cmd := commands[e.sub]
		if exactlyOnce(groups, cmd) {
			continue
		}
		rest, _, err := dropOurs(groups, cmd)
		if err != nil {
			return nil, err
		}
		rest = append(rest, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": e.timeout}}})
		hooks[e.name] = rest
		changed = append(changed, e.name)
	}
	doc["hooks"] = hooks
	return changed, nil
}

// exactlyOnce reports whether cmd is the one hivemem hook among groups.
func exactlyOnce(groups []any, cmd string) bool {
	n, exact := 0, 0
	for _, gr := range groups {
		m, _ := gr.(map[string]any)
		list, _ := m["hooks"].([]any)
		for _, h := range list {
			hm, _ := h.(map[string]any)
			c, _ := hm["command"].(string)
			if isHivememHook(c) {
				n++
				if c == cmd {
					exact++
				}
			}
		}
	}
	return n == 1 && exact == 1
}

// removeHooks removes every hivemem hook, and the groups, events and
// "hooks" object that held nothing else.
func removeHooks(doc map[string]any) ([]string, error) {
	hooks, err := settingsHooks(doc)
	if err != nil || hooks == nil {
		return nil, err
	}
	var changed []string
	for event := range hooks {
		groups, err := hookGroups(hooks, event)
		if err != nil {
			return nil, err
		}
		rest, _, err := dropOurs(groups, "")
		if err != nil {
			return nil, err
		}
		if reflect.DeepEqual(rest, groups) || len(rest) == len(groups) && len(groups) == 0 {
			continue
		}
		changed = append(changed, event)
		if len(rest) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = rest
		}
	}
	if len(hooks) == 0 {
		delete(doc, "hooks")
	}
	return changed, nil
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
