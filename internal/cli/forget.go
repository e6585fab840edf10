package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

type forgetOptions struct {
	heading, line      string
	purge, yes, asJSON bool
}

func newForgetCommand(g *globals) *cobra.Command {
	var o forgetOptions
	cmd := leafCommand("forget <agent> [drawer-id]",
		"Take a section (or, with --line, one line) out of an agent's memory.md; --purge removes a secret from every copy",
		cobra.RangeArgs(1, 2), func(ctx context.Context, args []string) error {
			req := app.ForgetRequest{Agent: args[0], Heading: o.heading, Line: o.line, Purge: o.purge}
			if len(args) == 2 {
				req.Drawer = args[1]
			}
			return runForget(ctx, g, o, req)
		})
	cmd.Long = "Remove a section, named by drawer id or --heading, or one line (--line TEXT: the line containing TEXT, in that section or\n" +
		"anywhere in the file) from the agent's memory file: locked, atomic, the file backed up first. The text is kept in\n" +
		"hive/forgotten/<agent>/ (never indexed) and its drawers leave the index at once.\n\n" +
		"--purge is for a secret pasted by mistake: the text is not kept but purged from the whole home (as `hivemem purge`\n" +
		"does): the section, each of its lines and every key-like word of it leave every agent's memory file, sessions, archives,\n" +
		"forgotten text, backups, the event log, the index and the embedding cache, and stay on the block list. No backup is made.\n" +
		"It asks you to type the agent id unless --yes. The output names places, never the text."
	f := cmd.Flags()
	f.StringVar(&o.heading, "heading", "", "the section to forget, by heading (the whole heading, or the part after its date)")
	f.StringVar(&o.line, "line", "", "forget only the line that contains this text")
	f.BoolVar(&o.purge, "purge", false, "purge the text from the whole home: every copy, the index, the embedding cache")
	f.BoolVar(&o.yes, "yes", false, "purge without asking")
	jsonFlag(cmd, &o.asJSON)
	return takesText(cmd)
}

func runForget(ctx context.Context, g *globals, o forgetOptions, req app.ForgetRequest) error {
	if req.Purge {
		req.Confirm = req.Agent
		if !o.yes {
			fmt.Fprintf(g.stderr, "purge: this takes the text out of every file of the home (%s's and any other agent's copy) and the index, for good.\ntype the agent id (%s) to go on: ", req.Agent, req.Agent)
			answer, err := bufio.NewReader(g.stdin).ReadString('\n')
			if err != nil && strings.TrimSpace(answer) == "" {
				return errors.New("forget: purge not confirmed (no answer; --yes purges without asking)")
			}
			if strings.TrimSpace(answer) != req.Agent {
				return fmt.Errorf("forget: purge not confirmed (%q is not %q); nothing changed", strings.TrimSpace(answer), req.Agent)
			}
		}
	}
	if err := req.Validate(); err != nil {
		return err
	}
	res, err := request(ctx, g, (*app.App).Forget, req)
	if err != nil {
		return err
	}
	if res.MineError != "" {
		fmt.Fprintf(g.stderr, "warning: the text is out of %s but the index is behind: %s; the next mine catches up\n", res.Source, res.MineError)
	}
	if o.asJSON {
		return writeJSON(g.stdout, res)
	}
	what := "line"
	if res.Section != nil {
		what = fmt.Sprintf("section %q (lines %d-%d)", res.Section.Heading, res.Section.StartLine, res.Section.EndLine)
	} else if res.Line != nil {
		what = fmt.Sprintf("line %d", res.Line.Number)
	}
	if req.Purge {
		fmt.Fprintf(g.stdout, "purged %s of %s:\n", what, res.Source)
		if res.Purge != nil {
			writePurge(g.stdout, *res.Purge)
		}
		return nil
	}
	fmt.Fprintf(g.stdout, "forgot %s of %s: kept in %s (backup %s, %s removed from the index)\n", what, res.Source, res.Kept, res.Backup, plural(res.DrawersRemoved, "drawer"))
	return nil
}
