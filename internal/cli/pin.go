package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/hookinstall"
)

type pinOptions struct {
	replaces                  string
	asJSON, force, keepSecret bool
}

func newPinCommand(g *globals) *cobra.Command {
	var o pinOptions
	cmd := leafCommand(`pin <agent> "fact"`, "Add a durable fact to an agent's pinned region (never condensed)", cobra.ExactArgs(2),
		func(ctx context.Context, args []string) error { return runPin(ctx, g, args[0], args[1], o) })
	f := cmd.Flags()
	f.StringVar(&o.replaces, "replaces", "", "a pinned fact the new one replaces (it goes to the archive, dated today)")
	f.BoolVar(&o.force, "force", false, "pin the fact even if a pinned one already says it in other words")
	keepSecretsFlag(cmd, &o.keepSecret, "fact")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

func runPin(ctx context.Context, g *globals, agent, fact string, o pinOptions) error {
	asJSON := o.asJSON
	a, err := g.openForWrite(ctx) // as for remember: the fact first, the index after
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Pin(ctx, app.PinRequest{Agent: agent, Fact: fact, Replaces: o.replaces, Force: o.force, KeepSecrets: o.keepSecret})
	if err != nil {
		return err
	}
	if !asJSON {
		sayRedaction(g, res.Redaction)
	}
	if res.Duplicate != nil && !asJSON {
		sayDuplicate(g, res.Duplicate)
		return nil
	}
	warnMineFailed(g, "fact", a.Home().Abs(res.Source), res.MineError)
	if asJSON {
		return writeJSON(g.stdout, res)
	}
	sayCreated(g, agent, res.Created)
	if res.Restates != nil {
		defer fmt.Fprintf(g.stdout, "restates the pinned fact %q with something changed; if this one replaces it: hivemem unpin %s %s\n",
			res.Restates.Text, agent, hookinstall.ShellQuote(res.Restates.Text))
	}
	if res.Replaced != "" {
		fmt.Fprintf(g.stdout, "pinned for %s in place of %q (archived in %s)\n", agent, res.Replaced, res.Archive)
	} else if res.Added {
		fmt.Fprintf(g.stdout, "pinned for %s\n", agent)
	} else {
		fmt.Fprintf(g.stdout, "already pinned for %s\n", agent)
	}
	return nil
}
