// Package hookinstall merges hivemem's hooks into an agent program's
// settings file (Claude Code's settings.json, Codex's hooks.json) and
// removes them again: the file is backed up first, swapped in atomically,
// and installing twice changes nothing. What the hooks run (hivemem hook
// session-start and hook save) is not here: that is the cli's.
package hookinstall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemem/hivemem/internal/home"
)

// Target is an agent program whose hooks hivemem installs.
type Target string

// The agent programs hooks can be installed for.
const (
	ClaudeCode Target = "claude-code"
	Codex      Target = "codex"
)

// TargetNames lists the targets, for messages.
func TargetNames() string { return "claude-code or codex" }

// target is how a Target keeps its hooks.
type target struct {
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

var targets = map[Target]target{
	// Claude Code: hooks in settings.json; SessionStart's added context
	// goes in hookSpecificOutput.additionalContext.
	ClaudeCode: {dir: ".claude", file: "settings.json", format: "claude-code", events: []hookEvent{
		{"SessionStart", "session-start", 15}, {"PreCompact", "save", 60}, {"SessionEnd", "save", 60},
	}, user: func() string { return filepath.Join(userHome(), ".claude") }},
	// Codex: the same hook shape in hooks.json (CODEX_HOME, default
	// ~/.codex); it has no SessionEnd, so the session is saved at every
	// Stop (the end of each turn: an import appends only new turns).
	Codex: {dir: ".codex", file: "hooks.json", format: "codex", events: []hookEvent{
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

// Options say which settings file, and what the hooks run.
type Options struct {
	Project string // project directory; "" is the current one
	User    bool   // the user's settings instead of a project's
	Agent   string // agent id written into the hooks; "" leaves it to $HIVEMEM_AGENT (Install only)
	Command string // the hivemem binary the hooks run; "" is this one (Install only)
	Home    string // hivemem home written into the hooks as --home; "" writes none (Install only)
}

// Result is what Install or Uninstall did.
type Result struct {
	Path    string   // the settings file
	Changed bool     // whether the file was written; false: it was as asked already
	Events  []string // the events whose hooks changed
	Backup  string   // the copy of the file as it was, when there was one and it changed
}

// Install merges hivemem's hooks into t's settings, replacing older
// hivemem hooks; other hooks in the file are left as they are.
func Install(ctx context.Context, t Target, o Options) (Result, error) {
	return apply(ctx, t, o, true)
}

// Uninstall removes the hooks hivemem installed from t's settings, and
// nothing else.
func Uninstall(ctx context.Context, t Target, o Options) (Result, error) {
	return apply(ctx, t, o, false)
}

func apply(ctx context.Context, name Target, o Options, install bool) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	t, ok := targets[name]
	if !ok {
		return Result{}, fmt.Errorf("unknown agent program %q (want %s)", string(name), TargetNames())
	}
	path, err := settingsPath(t, o)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: path}
	var commands map[string]string
	if install {
		if o.Agent != "" {
			if err := home.ValidateAgentID(o.Agent); err != nil {
				return res, err
			}
		}
		commands, err = hookCommands(t, o)
		if err != nil {
			return res, err
		}
	}
	doc, old, err := readSettings(path)
	if err != nil {
		return res, err
	}
	before, _ := json.Marshal(doc)
	if install {
		res.Events, err = mergeHooks(doc, t, commands)
	} else {
		res.Events, err = removeHooks(doc)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	after, _ := json.Marshal(doc)
	if bytes.Equal(before, after) {
		res.Events = nil
		return res, nil
	}
	res.Backup, err = writeSettings(path, old, doc)
	if err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// settingsPath is the absolute path of t's settings file under o.
func settingsPath(t target, o Options) (string, error) {
	dir := filepath.Join(o.Project, t.dir)
	switch {
	case o.User:
		dir = t.user()
	case o.Project == "":
		dir = t.dir
	default:
		if st, err := os.Stat(o.Project); err != nil || !st.IsDir() {
			return "", fmt.Errorf("project directory %s does not exist", o.Project)
		}
	}
	return filepath.Abs(filepath.Join(dir, t.file))
}

// hookCommands is the command line of each hook subcommand.
func hookCommands(t target, o Options) (map[string]string, error) {
	bin := o.Command
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
	if o.Agent != "" {
		args += " --agent " + ShellQuote(o.Agent)
	}
	if o.Home != "" {
		h, err := filepath.Abs(o.Home)
		if err != nil {
			return nil, err
		}
		args += " --home " + ShellQuote(h)
	}
	out := map[string]string{}
	for _, e := range t.events {
		out[e.sub] = ShellQuote(bin) + " hook " + e.sub + args
		if e.sub == "save" {
			out[e.sub] += " --format " + t.format
		}
	}
	return out, nil
}

// ShellQuote quotes s for a POSIX shell when it needs it: the hook
// commands written here and the commands the CLI prints for a person to
// run; firstShellWord undoes it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
