package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
)

// ToolPurge takes a text out of the whole home.
const ToolPurge = "memory_purge"

// PurgeInput is memory_purge's arguments: see app.PurgeRequest.
type PurgeInput struct {
	Text   string `json:"text" jsonschema:"the exact text to take out of every file of the home (a secret pasted by mistake), at least 8 bytes"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"change nothing: say where the text stands, as counts"`
}

// PurgeOutput is the app's purge result: where, never the text.
type PurgeOutput = app.PurgeResult

// addPurgeTool registers memory_purge.
func addPurgeTool(srv *mcp.Server, s *server) error {
	sc, err := inferInput[PurgeInput]()
	if err != nil {
		return err
	}
	addTool(srv, s, &mcp.Tool{Name: ToolPurge, InputSchema: sc,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)},
		Description: "Take a text (a secret pasted by mistake) out of the whole home: every agent's memory file, sessions, " +
			"archives, forgotten text, backups, the event log and the index; it stays on a block list so that it is redacted " +
			"if written again. Not for a server bound to one agent (use memory_forget with purge). dry_run says where first."}, s.purge)
	return nil
}

func (s *server) purge(ctx context.Context, in PurgeInput) (PurgeOutput, string, error) {
	res, err := s.d.App.Purge(ctx, app.PurgeRequest{Text: in.Text, DryRun: in.DryRun, LockWait: lockWait, Scope: s.scope()})
	return res, "", err
}
