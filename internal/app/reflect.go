package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/hivemem/hivemem/internal/reflector"
)

// What became of one condensation (CondenseResult.Status).
const (
	CondenseCondensed = reflector.StatusCondensed
	CondenseDryRun    = reflector.StatusDryRun
	CondenseSkipped   = reflector.StatusSkipped
	CondenseAborted   = reflector.StatusAborted
)

// NothingToCondense says the condensation was aborted for a reason that
// is no failure (the file would not shrink, nothing to evict): the file
// is left as it is.
func (r CondenseResult) NothingToCondense() bool {
	return r.Status == CondenseAborted && reflector.Benign(r.Reason)
}

// Failed says the condensation was aborted for a reason that is a
// failure (it counts towards the agent's backoff).
func (r CondenseResult) Failed() bool {
	return r.Status == CondenseAborted && !reflector.Benign(r.Reason)
}

// ReflectRequest is `hivemem reflect`: without agents, Now or DryRun, one
// pass over every agent as the schedule runs it; else a condensation of
// each agent named (every agent when none is).
type ReflectRequest struct {
	Agents []string `json:"agents,omitempty"`
	Now    bool     `json:"now,omitempty"`     // regardless of triggers and backoff
	DryRun bool     `json:"dry_run,omitempty"` // write nothing
}

// ReflectResult is one result per agent condensed, skipped or aborted.
type ReflectResult struct {
	Results []CondenseResult `json:"results"`
	Failed  int              `json:"failed"` // condensations aborted by a failure
}

// Reflect condenses as r asks. An aborted condensation is a result, not
// the error; an agent gone since it was listed (none named) is skipped.
func (a *App) Reflect(ctx context.Context, r ReflectRequest) (ReflectResult, error) {
	var out ReflectResult
	named := len(r.Agents) > 0
	if !named && !r.Now && !r.DryRun {
		results, err := a.CondensePass(ctx)
		if err != nil {
			return out, err
		}
		out.Results = results
	} else {
		agents := r.Agents
		if !named {
			var err error
			if agents, err = a.home.Agents(); err != nil {
				return out, err
			}
		}
		for _, agent := range agents {
			res, err := a.Condense(ctx, CondenseRequest{Agent: agent, DryRun: r.DryRun, Force: r.Now})
			var ae *reflector.AbortError
			switch {
			case err == nil, errors.As(err, &ae):
			case !named && errors.Is(err, ErrNotFound): // gone since listed: skipped
			default:
				return out, fmt.Errorf("reflect: %w", err)
			}
			out.Results = append(out.Results, res)
		}
	}
	for _, res := range out.Results {
		if res.Failed() {
			out.Failed++
		}
	}
	return out, nil
}
