package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/app"
)

func newImportCommand(g *globals) *cobra.Command {
	var agent string
	var asJSON, keepSecrets bool
	cmd := leafCommand("import <format> <path|dir>...", "Turn conversations into an agent's session files (hive/agents/<id>/sessions/) and mine them", cobra.MinimumNArgs(2),
		func(ctx context.Context, args []string) error {
			return runImport(ctx, g, args[0], args[1:], agent, asJSON, keepSecrets)
		})
	cmd.Long = "Import conversations: one markdown file per conversation under hive/agents/<agent>/sessions/,\n" +
		"a dated section per exchange, one line per turn, mined with room \"session\".\n" +
		"A directory stands for the files of that format under it (e.g. ~/.claude/projects/<project>/).\n" +
		"Importing again appends only turns not imported before; malformed input changes nothing.\n\n" +
		"Formats: " + strings.Join(app.ImportFormats(), ", ") + ", or auto (detected per file)."
	cmd.Flags().StringVar(&agent, "agent", "", "the agent the sessions belong to (default $HIVEMEM_AGENT)")
	keepSecretsFlag(cmd, &keepSecrets, "conversations")
	jsonFlag(cmd, &asJSON)
	return cmd
}

// agentOrEnv is the --agent flag, else $HIVEMEM_AGENT.
func agentOrEnv(agent string) (string, error) {
	if agent == "" {
		agent = os.Getenv("HIVEMEM_AGENT")
	}
	if agent == "" {
		return "", errors.New("no agent: pass --agent or set HIVEMEM_AGENT")
	}
	return agent, nil
}

func runImport(ctx context.Context, g *globals, format string, paths []string, agent string, asJSON, keepSecrets bool) error {
	if err := app.CheckImportFormat(format); err != nil { // the first argument first
		return err
	}
	agent, err := agentOrEnv(agent)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	req := app.ImportRequest{Agent: agent, Format: format, Paths: paths, KeepSecrets: keepSecrets}
	if err := req.Validate(); err != nil { // before the home is made for it
		return err
	}
	a, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer a.Close()
	pctx, done := g.mineProgress(ctx, "importing", asJSON)
	res, err := a.Import(pctx, req)
	done()
	if err != nil {
		return err
	}
	return g.printImport(a, res, asJSON)
}

func (g *globals) printImport(a *app.App, res app.ImportResult, asJSON bool) error {
	for _, s := range res.Skipped {
		fmt.Fprintf(g.stderr, "warning: skipped %s: %s\n", s.Path, s.Reason)
	}
	if res.MineErr != nil {
		warnMineFailed(g, "session", "hive/agents/…/sessions", res.MineErr.Error())
	}
	if asJSON {
		out := map[string]any{"sessions": res.Sessions, "turns_added": res.TurnsAdded, "expired": nonNil(res.Expired), "mine": res.Mine}
		if res.Sessions == nil {
			out["sessions"] = []app.ImportSession{}
		}
		if res.MineErr != nil {
			out["mine_error"] = res.MineErr.Error()
		}
		if len(res.Redacted) > 0 {
			out["redacted"] = res.Redacted
		}
		if len(res.SecretsKept) > 0 {
			out["secrets_kept"] = res.SecretsKept
		}
		if res.Purged > 0 {
			out["purged"] = res.Purged
		}
		return writeJSON(g.stdout, out)
	}
	sayRedaction(g, app.Redaction{Redacted: res.Redacted, Kept: res.SecretsKept})
	if res.Purged > 0 {
		fmt.Fprintln(g.stderr, purgedNote(res.Purged))
	}
	for _, s := range res.Sessions {
		state := "unchanged"
		switch {
		case s.TurnsAdded > 0 && s.TurnsKept == 0:
			state = "+" + plural(s.TurnsAdded, "turn")
		case s.TurnsAdded > 0:
			state = fmt.Sprintf("+%s (%d already there)", plural(s.TurnsAdded, "turn"), s.TurnsKept)
		}
		fmt.Fprintf(g.stdout, "%s: %s\n", a.Home().Rel(s.Path), state)
	}
	for _, p := range res.Expired {
		fmt.Fprintf(g.stdout, "%s: removed (capture.retention_days)\n", a.Home().Rel(p))
	}
	fmt.Fprintf(g.stdout, "imported %s into %s\n", plural(res.TurnsAdded, "turn"), plural(len(res.Sessions), "session file"))
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// purgedNote says that an import left purged texts out, and that the
// files it read still hold them.
func purgedNote(n int) string {
	return fmt.Sprintf("note: %s purged from this home left out of what was imported ([purged] instead); "+
		"the source transcript outside the home is not ours to change and still holds it", plural(n, "text"))
}
