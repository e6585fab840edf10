package summarize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Output caps: a runaway CLI must not grow the reflector's memory without bound.
const (
	maxCLIStdout = 16 << 20
	maxCLIStderr = 64 << 10
	// cliWaitDelay bounds how long Wait keeps reading pipes after the CLI
	// exits or is killed, in case something outside its process group still
	// holds them open.
	cliWaitDelay = 2 * time.Second
)

// claudeCLI runs the claude CLI headless: print mode, JSON output, no tools,
// no MCP servers, one turn, the prompt on stdin, in a fresh empty working
// directory so no project settings, CLAUDE.md or files are in reach.
type claudeCLI struct {
	command string
	model   string
	timeout time.Duration
}

func (c *claudeCLI) Name() string { return ProviderClaudeCLI }

// args is the CLI's argument list. `--tools ""` removes every built-in tool
// and `--strict-mcp-config` (with no --mcp-config) loads no MCP server, so
// the model can only answer; `--max-turns 1` stops any agent loop.
func (c *claudeCLI) args() []string {
	args := []string{"-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--max-turns", "1"}
	if c.model != "" {
		args = append(args, "--model", c.model)
	}
	return args
}

// cliEnvelope is the object `claude -p --output-format json` prints.
type cliEnvelope struct {
	Type    string          `json:"type"`
	Subtype string          `json:"subtype"`
	IsError bool            `json:"is_error"`
	Result  json.RawMessage `json:"result"`
}

// Summarize implements Summarizer. On timeout the whole process group is
// killed (the CLI starts helpers of its own) and the call returns promptly.
func (c *claudeCLI) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, failure(ProviderClaudeCLI, err, "canceled: %v", err)
	}
	dir, err := os.MkdirTemp("", "hivemem-summarize-*")
	if err != nil {
		return Result{}, failure(ProviderClaudeCLI, err, "cannot create a working directory: %v", err)
	}
	defer os.RemoveAll(dir)

	runCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, c.command, c.args()...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(Prompt(req))
	stdout := &cappedBuffer{limit: maxCLIStdout}
	stderr := &cappedBuffer{limit: maxCLIStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = cliWaitDelay
	setProcessGroup(cmd)

	runErr := cmd.Run()
	if cmd.Process != nil {
		killProcessGroup(cmd) // reap stragglers left behind even on success
	}
	errText := strings.TrimSpace(stderr.String())
	if runErr != nil {
		// A run that was killed by its context reports that, not the signal.
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, failure(ProviderClaudeCLI, ctxErr, "canceled: %v", ctxErr)
		}
		if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
			return Result{}, failure(ProviderClaudeCLI, context.DeadlineExceeded, "timed out after %s", c.timeout)
		}
		var exitErr *exec.ExitError
		switch {
		case errors.As(runErr, &exitErr):
			msg := errText
			if msg == "" {
				msg = envelopeText(stdout.Bytes())
			}
			if msg == "" {
				msg = "no output"
			}
			return Result{}, failure(ProviderClaudeCLI, runErr, "%s exited with status %d: %s", c.command, exitErr.ExitCode(), snippet(msg, 2000))
		case errors.Is(runErr, exec.ErrWaitDelay):
			// The CLI itself succeeded; only a leftover descendant kept the
			// pipes open. Its output is complete, so go on.
		default:
			return Result{}, failure(ProviderClaudeCLI, runErr, "cannot run %s: %v", c.command, runErr)
		}
	}
	env, err := decodeEnvelope(stdout.Bytes())
	if err != nil {
		msg := fmt.Sprintf("cannot read %s output: %v", c.command, err)
		if errText != "" {
			msg += "; stderr: " + snippet(errText, 500)
		}
		return Result{}, failure(ProviderClaudeCLI, err, "%s", msg)
	}
	text := rawString(env.Result)
	if env.IsError || (env.Subtype != "" && env.Subtype != "success") {
		msg := text
		if msg == "" {
			msg = env.Subtype
		}
		return Result{}, failure(ProviderClaudeCLI, nil, "%s reported an error (%s): %s", c.command, env.Subtype, snippet(msg, 2000))
	}
	res, err := Parse(text)
	if err != nil {
		return Result{}, failure(ProviderClaudeCLI, err, "reply did not parse: %v", err)
	}
	return dropPinned(req, res), nil
}

// decodeEnvelope reads the CLI's JSON output: one result object, or (with
// --verbose in some versions) an array of messages ending in the result.
func decodeEnvelope(out []byte) (cliEnvelope, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return cliEnvelope{}, errors.New("no output on stdout")
	}
	var env cliEnvelope
	if out[0] == '[' {
		var msgs []cliEnvelope
		if err := json.Unmarshal(out, &msgs); err != nil {
			return cliEnvelope{}, fmt.Errorf("stdout is not JSON: %w (starts %q)", err, snippet(string(out), 80))
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Type == "result" {
				return msgs[i], nil
			}
		}
		return cliEnvelope{}, errors.New("stdout has no result message")
	}
	if err := json.Unmarshal(out, &env); err != nil {
		return cliEnvelope{}, fmt.Errorf("stdout is not JSON: %w (starts %q)", err, snippet(string(out), 80))
	}
	if env.Type != "result" {
		return cliEnvelope{}, fmt.Errorf("stdout is a %q message, want \"result\"", env.Type)
	}
	if len(env.Result) == 0 && !env.IsError {
		return cliEnvelope{}, errors.New("result envelope has no \"result\"")
	}
	return env, nil
}

// envelopeText extracts the result text from stdout when it is an envelope,
// for error messages of a failed run.
func envelopeText(out []byte) string {
	env, err := decodeEnvelope(out)
	if err != nil {
		return strings.TrimSpace(string(out))
	}
	if s := rawString(env.Result); s != "" {
		return s
	}
	return env.Subtype
}

// rawString returns a JSON string's value, or the raw JSON for any other value.
func rawString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// cappedBuffer keeps the first limit bytes written and silently drops the
// rest, so the child never blocks on a full pipe.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *cappedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *cappedBuffer) String() string { return b.buf.String() }
