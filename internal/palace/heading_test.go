package palace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/memory"
)

// TestRememberHeadingCutsAtAWord: a note remembered without a heading is
// headed by its first line, cut — when too long — at the end of its first
// sentence or at a word, never inside a word; and wake-up shows that first
// line once, not as the heading and again after it.
func TestRememberHeadingCutsAtAWord(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, text, heading, wake string
	}{{
		name:    "a long first sentence is cut at a word",
		text:    "Customer Acme uses SSO via Okta; their admin contact is Priya Raman (priya@acme.example).",
		heading: "2026-12-06 — Customer Acme uses SSO via Okta; their admin contact is…",
		wake:    "- 2026-12-06 — Customer Acme uses SSO via Okta; their admin contact is Priya Raman (priya@acme.example).\n",
	}, {
		name:    "a first sentence within the bound is kept whole",
		text:    "The staging database moved to pg-2. Its old host is switched off on Friday after the backup.",
		heading: "2026-12-06 — The staging database moved to pg-2. …",
		wake:    "- 2026-12-06 — The staging database moved to pg-2. Its old host is switched off on Friday after the backup.\n",
	}, {
		name:    "a short note is its own heading, shown once",
		text:    "Deploys go out on Thursdays at nine.",
		heading: "2026-12-06 — Deploys go out on Thursdays at nine.",
		wake:    "- 2026-12-06 — Deploys go out on Thursdays at nine.\n",
	}, {
		name:    "a word longer than the bound is cut inside itself",
		text:    "https://example.com/" + strings.Repeat("a", 80) + " is the runbook",
		heading: "2026-12-06 — https://example.com/" + strings.Repeat("a", 40) + "…",
		wake:    "- 2026-12-06 — https://example.com/" + strings.Repeat("a", 80) + " is the runbook\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			w, err := memory.Remember(context.Background(), f.h, "alice", "", c.text, now)
			if err != nil {
				t.Fatal(err)
			}
			if w.Section.Heading != c.heading {
				t.Errorf("heading = %q\nwant      %q", w.Section.Heading, c.heading)
			}
			d, err := f.p.WakeUp(context.Background(), "alice", 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(d.Text, c.wake) {
				t.Errorf("wake-up lacks %q:\n%s", c.wake, d.Text)
			}
		})
	}
}
