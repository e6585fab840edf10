package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/hookinstall"
)

type rememberOptions struct {
	heading, supersedes       string
	asJSON, force, keepSecret bool
}

func newRememberCommand(g *globals) *cobra.Command {
	var o rememberOptions
	cmd := leafCommand(`remember <agent> "text"`, "Append a dated section to an agent's memory.md (locked, atomic) and mine it", cobra.ExactArgs(2),
		func(ctx context.Context, args []string) error { return runRemember(ctx, g, o, args[0], args[1]) })
	cmd.Long = `Append a dated section. Text "-" reads the note from standard input.`
	f := cmd.Flags()
	f.StringVar(&o.heading, "heading", "", "section heading after the date (default: the text's first line)")
	f.StringVar(&o.supersedes, "supersedes", "", "drawer id or heading of an earlier section this note replaces (marked superseded, left out of search)")
	f.BoolVar(&o.force, "force", false, "write the note even if it repeats one the agent has")
	keepSecretsFlag(cmd, &o.keepSecret, "note")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

func runRemember(ctx context.Context, g *globals, o rememberOptions, agent, text string) error {
	if text == "-" {
		// One byte past the limit tells an over-long note from one that
		// fits; the cut may split a character, so the size is checked here,
		// before the palace checks the text is UTF-8.
		b, err := io.ReadAll(io.LimitReader(g.stdin, app.MaxRememberBytes+1))
		if err != nil {
			return fmt.Errorf("remember: read stdin: %w", err)
		}
		if len(b) > app.MaxRememberBytes {
			return fmt.Errorf("remember: text from stdin is %d bytes or more, at most %d allowed", len(b), app.MaxRememberBytes)
		}
		text = string(b)
	}
	a, err := g.openForWrite(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Remember(ctx, app.RememberRequest{Agent: agent, Text: text, Heading: o.heading, Supersedes: o.supersedes, Force: o.force, KeepSecrets: o.keepSecret})
	if err != nil {
		return err
	}
	if !o.asJSON {
		sayRedaction(g, res.Redaction)
	}
	if res.Duplicate != nil && !o.asJSON {
		sayDuplicate(g, res.Duplicate)
		return nil
	}
	path := a.Home().Abs(res.Source)
	warnMineFailed(g, "note", path, res.MineError)
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	sayCreated(g, agent, res.Created)
	if res.MineError != "" {
		fmt.Fprintf(g.stdout, "remembered in %s (not indexed yet)\n", path)
		return nil
	}
	if res.Existing {
		fmt.Fprintf(g.stdout, "already in %s as %q (line %d): only marked what it replaces\n", path, res.Section.Heading, res.Section.StartLine)
	} else {
		fmt.Fprintf(g.stdout, "remembered in %s (%s added)\n", path, plural(res.DrawersAdded, "drawer"))
	}
	if res.Supersedes != nil {
		fmt.Fprintf(g.stdout, "superseded %q (line %d): left out of search unless --include-superseded\n", res.Supersedes.Heading, res.Supersedes.StartLine)
	}
	if res.Restates != nil {
		arg := hookinstall.ShellQuote(text)
		if strings.ContainsAny(text, "\r\n") || len(text) > 200 {
			arg = "- < the-same-note" // a long note: the same text on stdin
		}
		fmt.Fprintf(g.stdout, "restates %s (%q) with something changed; if this note replaces it: hivemem remember %s --supersedes %s %s\n",
			res.Restates.Of, res.Restates.Heading, agent, res.Restates.Of, arg)
	}
	return nil
}
