package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/reflector"
)

func TestCondenseResultTellsFailureFromNothingToCondense(t *testing.T) {
	for _, c := range []struct {
		name, status, reason string
		failed, benignOne    bool
	}{
		{"condensed", CondenseCondensed, "", false, false},
		{"skipped", CondenseSkipped, reflector.SkipUnderTrigger, false, false},
		{"aborted: nothing to evict", CondenseAborted, reflector.SkipNothingToEvict, false, true},
		{"aborted: not smaller", CondenseAborted, reflector.ReasonNotSmaller, false, true},
		{"aborted: a failure", CondenseAborted, reflector.ReasonCanceled, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r CondenseResult
			r.Status, r.Reason = c.status, c.reason
			if got := r.Failed(); got != c.failed {
				t.Errorf("Failed() = %v, want %v", got, c.failed)
			}
			if got := r.NothingToCondense(); got != c.benignOne {
				t.Errorf("NothingToCondense() = %v, want %v", got, c.benignOne)
			}
		})
	}
}

func TestReflectCondensesEveryAgentOrTheNamedOnes(t *testing.T) {
	a := openLexical(t)
	ctx := context.Background()
	for _, agent := range []string{"alice", "bob"} {
		hometest.WriteMemory(t, a.home, agent, "# Memory — "+agent+"\n\n## 2026-11-20 — a note\nbody\n")
	}
	for _, c := range []struct {
		name    string
		req     ReflectRequest
		agents  []string
		wantErr error
	}{
		{"a dry run over every agent", ReflectRequest{DryRun: true}, []string{"alice", "bob"}, nil},
		{"a dry run of one named", ReflectRequest{Agents: []string{"bob"}, DryRun: true}, []string{"bob"}, nil},
		{"a named agent without a memory file", ReflectRequest{Agents: []string{"nobody"}, DryRun: true}, nil, ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := a.Reflect(ctx, c.req)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || !strings.HasPrefix(err.Error(), "reflect: ") {
					t.Fatalf("err = %v, want a reflect: error of kind %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range out.Results {
				got = append(got, r.Agent)
				if r.Failed() {
					t.Errorf("%s: a failure: %+v", r.Agent, r)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.agents, ",") || out.Failed != 0 {
				t.Errorf("results for %v (failed %d), want %v (failed 0)", got, out.Failed, c.agents)
			}
		})
	}
}
