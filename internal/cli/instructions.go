package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/mcpserver"
)

type instructionsOptions struct {
	agent    string
	cli, mcp bool
}

func newInstructionsCommand(g *globals) *cobra.Command {
	var o instructionsOptions
	cmd := noArgsCommand("instructions [--agent A] [--cli|--mcp]", "Print the text for an agent's system prompt: how to search, wake up, remember and pin",
		func(context.Context) error { return runInstructions(g.stdout, o) })
	cmd.Long = `Print a short text a harness puts in an agent's system prompt, telling the
agent how to use the team's memory: wake up at the start of a task, search
before redoing work, remember what it learns, pin what always holds. --cli
(the default) names the hivemem commands; --mcp names the MCP tools of
` + "`hivemem mcp`" + `. --agent fills in the agent's id.`
	f := cmd.Flags()
	f.StringVar(&o.agent, "agent", "", "the agent the text is for (default: a placeholder, <agent>)")
	f.BoolVar(&o.cli, "cli", false, "name the hivemem commands (the default)")
	f.BoolVar(&o.mcp, "mcp", false, "name the MCP tools")
	return cmd
}

func runInstructions(w io.Writer, o instructionsOptions) error {
	if o.cli && o.mcp {
		return errors.New("instructions: --cli and --mcp exclude each other: pick one")
	}
	if o.agent != "" {
		if err := home.ValidateAgentID(o.agent); err != nil {
			return fmt.Errorf("instructions: --agent: %w", err)
		}
	}
	_, err := io.WriteString(w, instructionsText(o.agent, o.mcp))
	return err
}

// instructionsText is the system-prompt text for agent ("" for a
// placeholder), naming the MCP tools when mcp is set, else the commands.
func instructionsText(agent string, mcp bool) string {
	id := agent
	if id == "" {
		id = "<agent>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Team memory (hivemem)\n\n")
	fmt.Fprintf(&b, "You share long-term memory with the other agents of this team. Your notes are the markdown file\n")
	fmt.Fprintf(&b, "hive/agents/%s/memory.md; every agent's file is indexed, so the whole team can search what anyone learned.\n\n", id)
	if mcp {
		agentArg := ""
		if agent == "" {
			agentArg = ` (pass "agent": "<agent>")`
		}
		fmt.Fprintf(&b, "- At the start of a task, call %s with wing %q: your pinned facts, condensed history and newest notes.\n", mcpserver.ToolWakeUp, id)
		fmt.Fprintf(&b, "- Before you redo work or ask a question someone may have answered, call %s with a few keywords\n", mcpserver.ToolSearch)
		fmt.Fprintf(&b, "  (add a wing to search one agent); open a hit in full with %s.\n", mcpserver.ToolRead)
		fmt.Fprintf(&b, "- When you learn something worth keeping (a decision and why, a fix, a gotcha), call %s%s\n", mcpserver.ToolRemember, agentArg)
		fmt.Fprintf(&b, "  with one self-contained note.\n")
		fmt.Fprintf(&b, "- For a durable fact that always holds (a convention, a standing decision), call %s%s; pinned facts\n", mcpserver.ToolPin, agentArg)
		fmt.Fprintf(&b, "  are never condensed away.\n")
		fmt.Fprintf(&b, "- When a note of yours is no longer true, call %s with supersedes (the old hit's drawer id) so the\n", mcpserver.ToolRemember)
		fmt.Fprintf(&b, "  old one leaves search; %s with replaces or %s for a pinned fact; %s for a note that is wrong.\n", mcpserver.ToolPin, mcpserver.ToolUnpin, mcpserver.ToolForget)
	} else {
		fmt.Fprintf(&b, "- At the start of a task: `hivemem wake-up --wing %s` (your pinned facts, condensed history and newest notes).\n", id)
		fmt.Fprintf(&b, "- Before you redo work or ask a question someone may have answered: `hivemem search \"<a few keywords>\"`\n")
		fmt.Fprintf(&b, "  (`--wing <agent>` for one agent's memory, `--results N` for more hits).\n")
		fmt.Fprintf(&b, "- When you learn something worth keeping (a decision and why, a fix, a gotcha):\n")
		fmt.Fprintf(&b, "  `hivemem remember %s \"<one self-contained note>\"`, or append a `## YYYY-MM-DD — <heading>` section to your memory.md.\n", id)
		fmt.Fprintf(&b, "- For a durable fact that always holds (a convention, a standing decision): `hivemem pin %s \"<fact>\"`;\n", id)
		fmt.Fprintf(&b, "  pinned facts are never condensed away.\n")
		fmt.Fprintf(&b, "- When a note of yours is no longer true: `hivemem remember %s \"<the new note>\" --supersedes <drawer id>`\n", id)
		fmt.Fprintf(&b, "  (the old one leaves search); `hivemem pin %s \"<fact>\" --replaces \"<old fact>\"`, `hivemem unpin`, `hivemem forget`.\n", id)
	}
	fmt.Fprintf(&b, "- Write facts, not chatter: one dated note per thing learned, readable without this conversation. Never write secrets.\n")
	fmt.Fprintf(&b, "- Old notes are condensed into a summary as the file grows; the originals stay searchable in the archive.\n")
	return b.String()
}
