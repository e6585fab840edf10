package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
)

// TestCountsGivenAreChecked: a number of results or a budget the caller
// gave (a flag, a query parameter, an argument) is held to its range, 0
// included, with one message for every front end; left out (0, not
// given), it is the configured default.
func TestCountsGivenAreChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"results 0 given", app.SearchRequest{Query: "x", ResultsGiven: true}.Validate(), "results must be between 1 and 1000, got 0"},
		{"results 0 given, MCP's cap", app.SearchRequest{Query: "x", ResultsGiven: true, MaxResults: 100}.Validate(), "results must be between 1 and 100, got 0"},
		{"results -1", app.SearchRequest{Query: "x", Results: -1, ResultsGiven: true}.Validate(), "results must be between 1 and 1000, got -1"},
		{"results over the cap", app.SearchRequest{Query: "x", Results: 101, ResultsGiven: true, MaxResults: 100}.Validate(), "results must be between 1 and 100, got 101"},
		{"budget 0 given", app.WakeUpRequest{BudgetGiven: true}.Validate(), "budget must be between 1 and 100000 tokens, got 0"},
		{"budget -1", app.WakeUpRequest{Budget: -1, BudgetGiven: true}.Validate(), "budget must be between 1 and 100000 tokens, got -1"},
		{"budget 0 given, MCP's cap", app.WakeUpRequest{BudgetGiven: true, MaxBudget: 20000}.Validate(), "budget must be between 1 and 20000 tokens, got 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) || !errors.Is(c.err, app.ErrInvalid) {
				t.Errorf("err = %v; want a bad query containing %q", c.err, c.want)
			}
		})
	}
	for _, err := range []error{app.SearchRequest{Query: "x"}.Validate(), app.WakeUpRequest{}.Validate()} {
		if err != nil {
			t.Errorf("a count left out: %v; want the default", err)
		}
	}
}
