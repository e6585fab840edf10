package mcpserver

import (
	"context"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/app"
)

// Tool names of the corrections.
const (
	ToolForget = "memory_forget"
	ToolUnpin  = "memory_unpin"
)

// ForgetInput is memory_forget's arguments: see app.ForgetRequest.
type ForgetInput struct {
	Drawer  string `json:"drawer,omitempty" jsonschema:"drawer id (from memory_search) of the section to forget"`
	Heading string `json:"heading,omitempty" jsonschema:"or the heading of the section to forget (the whole heading, or the part after its date)"`
	Line    string `json:"line,omitempty" jsonschema:"forget only the one line containing this text (in that section, or anywhere in the file)"`
	Purge   bool   `json:"purge,omitempty" jsonschema:"for a secret pasted by mistake: remove the text from every copy (archive, backups, index), not only from the file; cannot be undone"`
	Confirm string `json:"confirm,omitempty" jsonschema:"a purge must repeat the agent id here"`
	Agent   string `json:"agent,omitempty" jsonschema:"whose memory; needed only when the server is bound to no agent"`
}

// ForgetOutput is the app's forget result.
type ForgetOutput = app.ForgetResult

// UnpinInput is memory_unpin's arguments.
type UnpinInput struct {
	Fact  string `json:"fact" jsonschema:"the pinned fact that stopped being true (as memory_read shows it)"`
	Agent string `json:"agent,omitempty" jsonschema:"whose memory; needed only when the server is bound to no agent"`
}

// UnpinOutput is the app's unpin result.
type UnpinOutput = app.UnpinResult

// correctionSchemas are memory_forget's and memory_unpin's input schemas,
// inferred as the others are (inputSchemas): the app checks the lengths.
var correctionSchemas = sync.OnceValues(func() ([2]*jsonschema.Schema, error) {
	f, err := inferInput[ForgetInput]()
	if err != nil {
		return [2]*jsonschema.Schema{}, err
	}
	u, err := inferInput[UnpinInput]()
	return [2]*jsonschema.Schema{f, u}, err
})

// addCorrectionTools registers memory_forget and memory_unpin.
func addCorrectionTools(srv *mcp.Server, s *server) error {
	sc, err := correctionSchemas()
	if err != nil {
		return err
	}
	no, yes := new(false), new(true)
	addTool(srv, s, &mcp.Tool{Name: ToolForget, InputSchema: sc[0],
		Annotations: &mcp.ToolAnnotations{DestructiveHint: yes, OpenWorldHint: no},
		Description: "Take back a section (by drawer id or heading) or one line of your memory file that is wrong: it leaves " +
			"the file (backed up first) and search, and is kept in hive/forgotten. purge=true (with confirm set to the agent id) " +
			"is for a secret pasted by mistake: the text is removed from every copy, archive, backups and index included."}, s.forget)
	addTool(srv, s, &mcp.Tool{Name: ToolUnpin, InputSchema: sc[1],
		Annotations: &mcp.ToolAnnotations{DestructiveHint: yes, OpenWorldHint: no},
		Description: "Take a pinned fact that stopped being true out of your pinned region; it goes to the archive dated " +
			"today. To replace it with the new fact, use memory_pin with replaces instead."}, s.unpin)
	return nil
}

func (s *server) forget(ctx context.Context, in ForgetInput) (ForgetOutput, string, error) {
	res, err := s.d.App.Forget(ctx, app.ForgetRequest{Agent: in.Agent, Drawer: in.Drawer, Heading: in.Heading, Line: in.Line,
		Purge: in.Purge, Confirm: in.Confirm, LockWait: lockWait, Scope: s.scope()})
	return res, "", err
}

func (s *server) unpin(ctx context.Context, in UnpinInput) (UnpinOutput, string, error) {
	res, err := s.d.App.Unpin(ctx, app.UnpinRequest{Agent: in.Agent, Fact: in.Fact, LockWait: lockWait, Scope: s.scope()})
	return res, "", err
}
