package redact_test

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/redact"
	"github.com/hivemem/hivemem/internal/redact/redacttest"
)

// BenchmarkRedactCorpus redacts the README's corpus (secrets and
// lookalikes, one text each): MB/s is the detector's throughput.
func BenchmarkRedactCorpus(b *testing.B) {
	g := redacttest.New(corpusSeed)
	var texts []string
	for _, s := range g.Secrets(corpusSize) {
		texts = append(texts, s.Text)
	}
	for _, l := range g.Lookalikes(corpusSize) {
		texts = append(texts, l.Text)
	}
	benchTexts(b, texts)
}

// BenchmarkRedactProse redacts ordinary session text without a secret,
// the common case of an import.
func BenchmarkRedactProse(b *testing.B) {
	g := redacttest.New(corpusSeed)
	looks := g.Lookalikes(200)
	var sb strings.Builder
	for i, l := range looks {
		sb.WriteString("## 2026-12-05 10:00 — step ")
		sb.WriteString(l.Kind)
		sb.WriteString("\n- **assistant**: I ran the tests again and the key point is that the worker restarts cleanly; ")
		sb.WriteString(l.Text)
		sb.WriteString("\n")
		if i%3 == 0 {
			sb.WriteString("- **user**: Thanks, the token refresh works now, and the password reset flow too.\n")
		}
	}
	benchTexts(b, []string{sb.String()})
}

func benchTexts(b *testing.B, texts []string) {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			redact.Default.Redact(t)
		}
	}
}
