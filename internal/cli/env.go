package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/hookinstall"
)

func newEnvCommand(g *globals) *cobra.Command {
	var agent string
	var asJSON bool
	cmd := noArgsCommand("env", "Print the environment an agent needs (HIVEMEM_HOME, HIVEMEM_AGENT, MemPalace compatibility)",
		func(ctx context.Context) error { return runEnv(ctx, g, agent, asJSON) })
	cmd.Flags().StringVar(&agent, "agent", "", "agent id to set HIVEMEM_AGENT to")
	jsonFlag(cmd, &asJSON)
	refuseEmpty(cmd, "agent")
	return cmd
}

// agentEnv is the environment of an agent process.
func agentEnv(h home.Home, cfg config.Config, agent string) map[string]string {
	env := map[string]string{
		"HIVEMEM_HOME":              h.Root,
		"MEMPALACE_PALACE_PATH":     h.PalaceDir(),
		"MEMPALACE_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
	}
	if cfg.Embedder.Provider == "openai" && cfg.Embedder.Model != "" {
		env["MEMPALACE_EMBEDDING_MODEL"] = cfg.Embedder.Model
	}
	if agent != "" {
		env["HIVEMEM_AGENT"] = agent
	}
	return env
}

func runEnv(_ context.Context, g *globals, agent string, asJSON bool) error {
	if agent != "" {
		if err := home.ValidateAgentID(agent); err != nil {
			return err
		}
	}
	h, cfg, err := g.homeConfig()
	if err != nil {
		return err
	}
	env := agentEnv(h, cfg, agent)
	if asJSON {
		return writeJSON(g.stdout, env)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(g.stdout, "export %s=%s\n", k, hookinstall.ShellQuote(env[k]))
	}
	return nil
}
