package redact_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/redact"
	"github.com/hivemem/hivemem/internal/redact/redacttest"
)

// corpusSeed fixes the corpus the README's figures come from.
const corpusSeed = 29

// corpusSize is how many secrets, and how many lookalikes, it holds.
const corpusSize = 5000

// corpusScore redacts n generated secrets and n lookalikes and returns
// the secrets missed (a needle survived) and the lookalikes changed, by
// kind.
func corpusScore(r *redact.Redactor, seed uint64, n int) (secrets, looks int, missed, changed map[string][]string) {
	g := redacttest.New(seed)
	missed, changed = map[string][]string{}, map[string][]string{}
	for _, s := range g.Secrets(n) {
		out, _ := r.Redact(s.Text)
		for _, needle := range s.Needles() {
			if strings.Contains(out, needle) {
				missed[s.Kind] = append(missed[s.Kind], s.Context+": "+s.Text)
				break
			}
		}
	}
	for _, l := range g.Lookalikes(n) {
		if out, _ := r.Redact(l.Text); out != l.Text {
			changed[l.Kind] = append(changed[l.Kind], l.Text+" => "+out)
		}
	}
	return n, n, missed, changed
}

func TestCorpusRecallAndFalsePositives(t *testing.T) {
	n, m, missed, changed := corpusScore(redact.Default, corpusSeed, corpusSize)
	nm, nc := 0, 0
	for k, v := range missed {
		nm += len(v)
		t.Errorf("missed %d of kind %s, e.g. %q", len(v), k, v[0])
	}
	for k, v := range changed {
		nc += len(v)
		t.Errorf("changed %d lookalikes of kind %s, e.g. %q", len(v), k, v[0])
	}
	t.Logf("secrets: %d of %d caught (%d kinds); lookalikes: %d of %d changed (%d kinds)",
		n-nm, n, len(redacttest.Kinds()), nc, m, len(redacttest.LookalikeKinds()))
}

// TestWriteCorpus writes the corpus the README's figures come from as
// JSON lines to $HIVEMEM_TEST_REDACT_CORPUS, so that another detector can
// be scored on the very same texts (the comparison in the README).
func TestWriteCorpus(t *testing.T) {
	path := os.Getenv("HIVEMEM_TEST_REDACT_CORPUS")
	if path == "" {
		t.Skip("HIVEMEM_TEST_REDACT_CORPUS is not set")
	}
	g := redacttest.New(corpusSeed)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range g.Secrets(corpusSize) {
		if err := enc.Encode(map[string]any{"kind": s.Kind, "text": s.Text, "needles": s.Needles()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range g.Lookalikes(corpusSize) {
		if err := enc.Encode(map[string]any{"kind": l.Kind, "text": l.Text, "lookalike": true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
