package app

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/writelock"
)

// TestKindNamesEveryRefusalWithOneOfFourKinds: the app's own refusals and
// the domain errors that reach a front end through an operation fall into
// the one vocabulary, wrapped or not; a plain failure is of no kind.
func TestKindNamesEveryRefusalWithOneOfFourKinds(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"nil", nil, nil},
		{"a plain failure", errors.New("disk on fire"), nil},
		{"app bad input", badRequest("budget %d out of range", -1), ErrInvalid},
		{"app bad input, wrapped", fmt.Errorf("settings: %w", invalid(errors.New("x"))), ErrInvalid},
		{"app not found", notFound("agent %s has no memory file", "a"), ErrNotFound},
		{"app conflict", conflict("mining is off"), ErrConflict},
		{"a query the palace refuses", fmt.Errorf("search: %w", palace.BadQuery(errors.New("bad mode"))), ErrInvalid},
		{"a query without words", palace.ErrNoWords, ErrInvalid},
		{"an empty query", ErrEmptyQuery, ErrInvalid},
		{"a bad agent id", fmt.Errorf("agent: %w", home.ErrInvalidAgentID), ErrInvalid},
		{"an unknown wing", fmt.Errorf("search: %w", palace.ErrUnknownWing), ErrNotFound},
		{"an unknown room", palace.ErrUnknownRoom, ErrNotFound},
		{"a file replaced since read", fmt.Errorf("write: %w", atomicio.ErrReplaced), ErrConflict},
		{"a file lock held", fmt.Errorf("x: %w", atomicio.ErrLocked), ErrUnavailable},
		{"the palace lock held", fmt.Errorf("%w: held by pid 1", writelock.ErrBusy), ErrUnavailable},
		{"cancelled", context.Canceled, ErrUnavailable},
		{"timed out", fmt.Errorf("mine: %w", context.DeadlineExceeded), ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Kind(c.err); got != c.want {
				t.Errorf("Kind(%v) = %v, want %v", c.err, got, c.want)
			}
			if k := withKind(c.err); c.want != nil && !errors.Is(k, c.want) {
				t.Errorf("withKind(%v) is not %v", c.err, c.want)
			}
			if c.err != nil && withKind(c.err).Error() != c.err.Error() {
				t.Errorf("withKind changed the message %q to %q", c.err, withKind(c.err))
			}
		})
	}
}

// TestSearchRefusalsAreOfTheAppsKinds: a query the palace refuses and a
// wing it does not have come out of App.Search as ErrInvalid and
// ErrNotFound, with errors.Is, not only through Kind.
func TestSearchRefusalsAreOfTheAppsKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		req  SearchRequest
		want error
	}{
		{"bad mode", SearchRequest{Query: "x", Mode: "psychic"}, ErrInvalid},
		{"bad date", SearchRequest{Query: "x", Since: "yesterday"}, ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.req.Validate(); !errors.Is(err, c.want) {
				t.Errorf("Validate() = %v, want %v", err, c.want)
			}
		})
	}
}

// TestSearchOfAnUnknownWingIsNotFound: the palace's unknown wing comes
// out of App.Search as ErrNotFound, with errors.Is.
func TestSearchOfAnUnknownWingIsNotFound(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "plan", Text: "A plan."}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Search(ctx, SearchRequest{Query: "plan", Wing: "nobody"})
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, palace.ErrUnknownWing) {
		t.Errorf("Search(wing nobody) = %v, want ErrNotFound", err)
	}
}

// TestSearchUnknownIsEmptyAnswersAnUnknownScopeWithNoHits: the mempalace
// entry point asks for no hits, not an error, for a wing, agent or room
// not mined yet, as MemPalace answers.
func TestSearchUnknownIsEmptyAnswersAnUnknownScopeWithNoHits(t *testing.T) {
	ctx := context.Background()
	a := openLexical(t)
	if _, err := a.Remember(ctx, RememberRequest{Agent: "alice", Heading: "plan", Text: "A plan."}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []SearchRequest{{Wing: "nobody"}, {Agent: "nobody"}, {Room: "nowhere"}} {
		r.Query, r.UnknownIsEmpty = "plan", true
		res, err := a.Search(ctx, r)
		if err != nil || res.Hits == nil || len(res.Hits) != 0 {
			t.Errorf("Search(%+v) = %+v, %v; want no hits ([]) and no error", r, res.Hits, err)
		}
	}
}
