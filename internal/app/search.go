package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// Scope is who asks, for front ends that act for one agent (MCP): Caller
// is that agent ("" for none), and Own limits every read to its memory.
type Scope struct {
	Caller string `json:"caller,omitempty"`
	Own    bool   `json:"own,omitempty"`
}

// refuse is the error of a read outside an own scope.
func (s Scope) refuse(what, name string) error {
	return invalid(fmt.Errorf("%s %q refused: scope own, this server reads only agent %q's memory", what, name, s.Caller))
}

// SearchRequest is one search, from any front end. Validate checks it
// (palace.Query.Validate); MaxResults is the front end's cap on Results.
type SearchRequest struct {
	Query   string `json:"query"`
	Mode    string `json:"mode,omitempty"`    // hybrid, lexical, vector; "" the palace's best
	Results int    `json:"results,omitempty"` // 0: search.results from the settings
	Wing    string `json:"wing,omitempty"`
	Room    string `json:"room,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Since   string `json:"since,omitempty"` // YYYY-MM-DD
	Until   string `json:"until,omitempty"`
	// AsOf (YYYY-MM-DD) is the day the query is asked: a time it names
	// ("last week", "two months ago") is counted from it, and sections
	// dated then rank higher. "" is today.
	AsOf string `json:"as_of,omitempty"`
	// IncludeSuperseded keeps sections marked as replaced by a later one
	// (remember --supersedes), which search leaves out.
	IncludeSuperseded bool `json:"include_superseded,omitempty"`
	// ResultsGiven says Results came from the caller (a flag, a query
	// parameter, an argument) rather than being left out: then 0 is
	// refused as out of range, as a negative number is, instead of
	// meaning search.results.
	ResultsGiven bool `json:"-"`
	// MaxResults caps Results (0: palace.MaxResults). MCP asks at most
	// 100 hits; the CLI and the API up to palace.MaxResults.
	MaxResults int `json:"-"`
	// Scope: under an own scope the wing defaults to the caller's and no
	// other wing or agent is searched.
	Scope Scope `json:"-"`
	// UnknownIsEmpty answers a wing, agent or room the palace has no
	// drawers in with no hits instead of ErrNotFound, as MemPalace does:
	// a harness written for it may search a wing not mined yet.
	UnknownIsEmpty bool `json:"-"`
}

func (r SearchRequest) query() palace.Query {
	return palace.Query{Text: r.Query, Results: r.Results, Mode: r.Mode, IncludeSuperseded: r.IncludeSuperseded, AsOf: r.AsOf,
		Filter: store.Filter{Wing: r.Wing, Room: r.Room, Agent: r.Agent, Since: r.Since, Until: r.Until}}
}

// Validate checks the request as Search would, without searching. Every
// error is ErrInvalid.
func (r SearchRequest) Validate() error {
	if r.ResultsGiven && r.Results == 0 {
		return invalid(palace.ValidateResults(0, r.MaxResults))
	}
	if err := r.query().Validate(r.MaxResults); err != nil {
		return invalid(err)
	}
	if r.Scope.Own {
		if r.Wing != "" && r.Wing != r.Scope.Caller {
			return r.Scope.refuse("wing", r.Wing)
		}
		if r.Agent != "" && r.Agent != r.Scope.Caller {
			return r.Scope.refuse("agent", r.Agent)
		}
	}
	return nil
}

// SearchHit is one hit: a drawer with every score that ranked it, and
// (from the HTTP API) the dashboard page that shows it.
type SearchHit struct {
	Hit
	View string `json:"view,omitempty"`
}

// SearchResult is a search's answer, the same object from `hivemem
// search --json`, GET /api/v1/search and MCP memory_search.
type SearchResult struct {
	Query   string      `json:"query"`
	Mode    string      `json:"mode" jsonschema:"hybrid (keywords and meaning) or lexical (keywords only: no embedding model installed)"`
	Results int         `json:"results"` // how many hits were asked for
	TookMS  float64     `json:"took_ms"`
	Hits    []SearchHit `json:"hits"` // best first; [] for none
}

// Search validates r and searches the palace. A wing the palace does not
// have is palace.ErrUnknownWing, an agent it does not know
// palace.ErrUnknownAgent (both ErrNotFound), except the caller's own (no memory yet): no
// hits.
func (a *App) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	start := time.Now()
	if r.Scope.Own && r.Wing == "" {
		r.Wing = r.Scope.Caller
	}
	if err := r.Validate(); err != nil {
		return SearchResult{}, fmt.Errorf("search: %w", err)
	}
	if r.Results == 0 {
		r.Results = a.Settings().Search.Results
		if r.MaxResults > 0 {
			r.Results = min(r.Results, r.MaxResults)
		}
	}
	hits, err := a.palace.Search(ctx, r.query())
	if r.Scope.Caller != "" && (errors.Is(err, palace.ErrUnknownWing) && r.Wing == r.Scope.Caller ||
		errors.Is(err, palace.ErrUnknownAgent) && r.Agent == r.Scope.Caller) {
		hits, err = nil, nil
	}
	if r.UnknownIsEmpty && (errors.Is(err, palace.ErrUnknownWing) || errors.Is(err, palace.ErrUnknownAgent) || errors.Is(err, palace.ErrUnknownRoom)) {
		hits, err = nil, nil
	}
	if err != nil {
		return SearchResult{}, withKind(err)
	}
	mode := r.Mode
	if mode == "" || a.palace.Embedder() == nil {
		mode = a.palace.Mode()
	}
	res := SearchResult{Query: r.Query, Mode: mode, Results: r.Results, Hits: make([]SearchHit, len(hits))}
	for i, h := range hits {
		res.Hits[i] = SearchHit{Hit: Hit(h)}
	}
	res.TookMS = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}

// WakeUpRequest asks for a wake-up digest: one agent's (Wing), or with
// Hive (or no wing and no caller) one line per agent.
type WakeUpRequest struct {
	Wing   string `json:"wing,omitempty"`
	Budget int    `json:"budget,omitempty"` // estimated tokens; 0: search.wake_up_budget
	Hive   bool   `json:"hive,omitempty"`
	// BudgetGiven says Budget came from the caller: then 0 is refused
	// as out of range (see SearchRequest.ResultsGiven).
	BudgetGiven bool `json:"-"`
	// MaxBudget caps Budget (0: palace.MaxWakeUpBudget).
	MaxBudget int `json:"-"`
	// Scope: the wing defaults to the caller's; under an own scope no
	// other wing, and no hive overview.
	Scope Scope `json:"-"`
}

// Validate checks the request; every error is ErrInvalid.
func (r WakeUpRequest) Validate() error {
	maxBudget := r.MaxBudget
	if maxBudget <= 0 || maxBudget > palace.MaxWakeUpBudget {
		maxBudget = palace.MaxWakeUpBudget
	}
	bad := func(err error) error { return fmt.Errorf("wake-up: %w", invalid(err)) }
	switch {
	case r.Budget < 0 || r.Budget > maxBudget || r.BudgetGiven && r.Budget == 0:
		if r.Budget > maxBudget {
			return bad(fmt.Errorf("budget %d is too large (at most %d tokens)", r.Budget, maxBudget))
		}
		return bad(fmt.Errorf("budget must be between 1 and %d tokens, got %d", maxBudget, r.Budget))
	case r.Hive && r.Wing != "":
		return bad(errors.New("give wing or hive, not both"))
	}
	if err := memfile.CheckText("wing", r.Wing, memfile.MaxNameBytes); err != nil {
		return bad(err)
	}
	if r.Scope.Own {
		if r.Hive {
			return bad(fmt.Errorf("hive overview refused: scope own, this server reads only agent %q's memory", r.Scope.Caller))
		}
		if r.Wing != "" && r.Wing != r.Scope.Caller {
			return r.Scope.refuse("wing", r.Wing)
		}
	}
	return nil
}

// WakeUp validates r and builds the digest, the same object from
// `hivemem wake-up --json`, GET /api/v1/wake-up and MCP memory_wake_up.
func (a *App) WakeUp(ctx context.Context, r WakeUpRequest) (WakeUpResult, error) {
	if err := r.Validate(); err != nil {
		return WakeUpResult{}, err
	}
	wing := r.Wing
	if wing == "" && !r.Hive {
		wing = r.Scope.Caller // "" when unbound: the hive overview
	}
	budget := r.Budget
	if budget == 0 {
		budget = a.Settings().Search.WakeUpBudget
		if r.MaxBudget > 0 {
			budget = min(budget, r.MaxBudget)
		}
	}
	d, err := a.palace.WakeUp(ctx, wing, budget)
	return wakeUpResultOf(d), withKind(err) // what was built, as the palace gives it, even with ctx done
}
