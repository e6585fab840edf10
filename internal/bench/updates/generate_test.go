package updates

import (
	"bytes"
	"slices"
	"testing"
)

// TestGenerateIsSeededAndConsistent: a seed gives one hive; every
// question's wanted section states its subject, a current question wants
// the newest statement (later than every stale one), a past question
// names its section's date, and another seed gives another hive.
func TestGenerateIsSeededAndConsistent(t *testing.T) {
	opts := GenOptions{Seed: 3, Agents: 4, Subjects: 4, Filler: 6}
	a, b := Generate(opts), Generate(opts)
	if len(a.Agents) != 4 || len(a.Questions) != 2*4*4 {
		t.Fatalf("%d agents, %d questions: want 4 and 32", len(a.Agents), len(a.Questions))
	}
	for i := range a.Agents {
		if !bytes.Equal(a.Agents[i].File, b.Agents[i].File) {
			t.Fatalf("agent %s: the same seed gave two files", a.Agents[i].ID)
		}
	}
	opts.Seed = 4
	if c := Generate(opts); bytes.Equal(c.Agents[0].File, a.Agents[0].File) {
		t.Errorf("seeds 3 and 4 gave the same file")
	}
	agents := map[string]Agent{}
	for _, ag := range a.Agents {
		agents[ag.ID] = ag
	}
	for _, q := range a.Questions {
		secs := agents[q.Agent].Sections
		want := secs[q.Want]
		if want.Subject != q.Subject || len(q.Stale) != q.Changes {
			t.Errorf("%q: wants section %+v with %d stale, changes %d", q.Text, want, len(q.Stale), q.Changes)
		}
		for _, s := range q.Stale {
			if secs[s].Subject != q.Subject {
				t.Errorf("%q: stale section %q states %q", q.Text, secs[s].Heading, secs[s].Subject)
			}
			if !q.Past && secs[s].Date >= want.Date {
				t.Errorf("%q: stale %s not older than the newest %s", q.Text, secs[s].Date, want.Date)
			}
		}
		if q.Past && !bytes.Contains([]byte(q.Text), []byte(want.Date)) {
			t.Errorf("past question %q does not name %s", q.Text, want.Date)
		}
	}
}

// The pairs come out the same for a seed, every class of change and every
// form of repeat is drawn, and a change's two notes differ.
func TestGeneratePairs(t *testing.T) {
	a, b := GeneratePairs(PairOptions{Seed: 3}), GeneratePairs(PairOptions{Seed: 3})
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave other pairs")
	}
	classes, forms := map[string]int{}, map[string]int{}
	for _, p := range a {
		switch p.Kind {
		case "change":
			classes[p.Class]++
			if p.Old == p.New {
				t.Errorf("change %s: the notes are equal: %q", p.Class, p.Old)
			}
		case "repeat":
			forms[p.Class]++
		}
	}
	if len(classes) != len(valueClasses) || len(forms) != len(repeatForms) {
		t.Errorf("classes %v, forms %v: want every one", classes, forms)
	}
}
