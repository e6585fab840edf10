package app

import (
	"context"
	"errors"

	"github.com/hivemem/hivemem/internal/capture"
)

// ImportFormats lists the import formats (ImportRequest.Format), sorted;
// "auto" detects each file's.
func ImportFormats() []string { return capture.Formats() }

// Conversations are the conversation files found under a path, each with
// the format detected for it, and the files passed over: what
// ImportConversations imports.
type Conversations struct {
	found   []capture.Found
	skipped []Skip
}

// FindConversations finds the conversation files under path (a
// directory, or one file), without a home: `hivemem mine --mode convos`
// looks before it makes the home it imports into.
func FindConversations(ctx context.Context, path string) (Conversations, error) {
	found, skipped, err := capture.Collect(ctx, path)
	if err != nil {
		return Conversations{}, err
	}
	return Conversations{found: found, skipped: skipsOf(skipped)}, nil
}

// ImportConversations imports each file of c into the agent's sessions,
// as Import does one; a file that does not import is skipped. The
// result's Skipped lists the files passed over when found, then those
// that did not import, then those each import skipped.
func (a *App) ImportConversations(ctx context.Context, agent string, c Conversations) (ImportResult, error) {
	var all ImportResult
	skipped := c.skipped
	for _, f := range c.found {
		res, err := a.Import(ctx, ImportRequest{Agent: agent, Format: f.Format, Paths: []string{f.Path}})
		if err != nil {
			if ctx.Err() != nil {
				return all, err
			}
			skipped = append(skipped, Skip{Path: f.Path, Reason: err.Error()})
			continue
		}
		all.Sessions = append(all.Sessions, res.Sessions...)
		all.TurnsAdded += res.TurnsAdded
		all.Expired = append(all.Expired, res.Expired...)
		all.Skipped = append(all.Skipped, res.Skipped...)
		all.Mine, all.MineErr = res.Mine, errors.Join(all.MineErr, res.MineErr)
	}
	all.Skipped = append(skipped, all.Skipped...)
	return all, nil
}
