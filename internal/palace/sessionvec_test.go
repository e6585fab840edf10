package palace_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// topicEmbedder gives a text one dimension per topic word it holds, so a
// drawer's nearness to a query is plain to read off the test.
type topicEmbedder struct{}

var topics = []string{"quince", "bike", "tax", "dog", "garden"}

func (topicEmbedder) Dim() int        { return len(topics) + 1 }
func (topicEmbedder) ModelID() string { return "test-topics" }
func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(topics)+1)
		v[len(topics)] = 0.1 // no text is orthogonal to every other
		for j, w := range topics {
			v[j] = float32(strings.Count(strings.ToLower(t), w))
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// conversation is a session file with one exchange per user turn.
func conversation(turns ...string) string {
	var b strings.Builder
	b.WriteString("# Session\n\n")
	for i, x := range turns {
		fmt.Fprintf(&b, "## 2026-11-01 10:%02d — exchange\n- **user**: %s\n\n", i, x)
	}
	return b.String()
}

// A conversation about the query throughout outranks one with a single
// matching exchange among others (sessionVectors); memory files, and a
// search that sees one conversation only, keep their order.
func TestSessionVectorsLiftTheConversationNearestTheQuery(t *testing.T) {
	// alice's best exchange is the strongest single match; bob's whole
	// conversation is about quinces.
	texts := map[string][]string{
		"alice": {"quince jam", "fixed the bike", "paid the tax", "walked the dog", "bike lights"},
		"bob":   {"quince tree in the garden", "picked a quince", "quince jelly", "quince and the dog"},
	}
	cases := []struct {
		name    string
		file    string // under the agent's directory
		agents  []string
		wantTop string // agent of the first drawer after sessionVectors
	}{
		{"conversations", "sessions/2026-11-01-talk.md", []string{"alice", "bob"}, "bob"},
		{"memory files", "memory.md", []string{"alice", "bob"}, "alice"},
		{"one conversation", "sessions/2026-11-01-talk.md", []string{"alice"}, "alice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			h := hometest.New(t)
			p, st := hometest.Palace(t, h, topicEmbedder{}, palace.Options{})
			for _, a := range c.agents {
				filetest.Write(t, filepath.Join(h.AgentsDir(), a, c.file), conversation(texts[a]...))
			}
			if _, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{}); err != nil {
				t.Fatal(err)
			}
			// Each agent's first drawer as ranked by the fusion: alice's
			// ahead by a little.
			var ds []store.Drawer
			var scores []float64
			agentOf := map[string]string{}
			for i, a := range c.agents {
				got, err := st.Drawers(ctx, h.Rel(filepath.Join(h.AgentsDir(), a, c.file)))
				if err != nil || len(got) == 0 {
					t.Fatalf("drawers of %s: %v %d", a, err, len(got))
				}
				ds, scores = append(ds, got[0]), append(scores, 1-0.1*float64(i))
				agentOf[got[0].ID] = a
			}
			qv, err := topicEmbedder{}.Embed(ctx, []string{"quince"})
			if err != nil {
				t.Fatal(err)
			}
			order, err := p.SessionVectorsOrder(ctx, qv[0], ds, scores)
			if err != nil {
				t.Fatal(err)
			}
			if len(order) != len(ds) {
				t.Fatalf("%d drawers out of %d", len(order), len(ds))
			}
			if got := agentOf[order[0]]; got != c.wantTop {
				t.Fatalf("first drawer is %s's, want %s's", got, c.wantTop)
			}
		})
	}
}

// A store that fails is an error of the search, not a silent reorder.
func TestSessionVectorsReportAStoreError(t *testing.T) {
	p, st := hometest.Palace(t, hometest.New(t), topicEmbedder{}, palace.Options{})
	st.Close()
	ds := []store.Drawer{{ID: "a", Source: "a.md", Room: "session"}, {ID: "b", Source: "b.md", Room: "session"}}
	if _, err := p.SessionVectorsOrder(context.Background(), make([]float32, len(topics)+1), ds, []float64{1, 0.9}); err == nil || !strings.Contains(err.Error(), "session vectors") {
		t.Fatalf("closed store: err = %v", err)
	}
}

// Under reciprocal rank fusion a hit's score stays on RRF's scale: the
// session rules add shares of fused scores (rank.BoostSessions), never the
// conversation bonus, whose 0 to sessionVectorWeight would outweigh every
// RRF score (at most (1+w)/(k+1)).
func TestRRFScoresKeepTheirScaleInConversations(t *testing.T) {
	ctx := context.Background()
	h := hometest.New(t)
	opts := palace.Options{Fusion: palace.FusionRRF, RRFK: 60, VectorWeight: 0.5}
	p, _ := hometest.Palace(t, h, topicEmbedder{}, opts)
	for a, xs := range map[string][]string{
		"alice": {"quince jam", "fixed the bike", "paid the tax"},
		"bob":   {"quince tree in the garden", "picked a quince", "quince jelly"},
	} {
		filetest.Write(t, filepath.Join(h.AgentsDir(), a, "sessions", "2026-11-01-talk.md"), conversation(xs...))
	}
	if _, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(ctx, palace.Query{Text: "quince", Results: 6})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 2 {
		t.Fatalf("%d hits, want the quince exchanges of both conversations", len(hits))
	}
	top := (1 + opts.VectorWeight) / float64(opts.RRFK+1)
	for _, hit := range hits {
		if hit.Score > (1+0.3)*top+1e-9 { // rank.BoostSessions adds at most 0.3 of a score
			t.Errorf("%s %q: RRF score %.4f, above RRF's scale (at most %.4f with the session boost)", hit.Agent, hit.Text, hit.Score, 1.3*top)
		}
	}
}

// The bonus is scaled on the candidates' own cosines, not over the
// conversations seen: conversations no nearer the query as a whole than
// the weakest candidate drawer gain nothing, so the nearest of two poor
// ones does not pass a note that matches better.
func TestSessionVectorsLiftNoConversationFarFromTheQuery(t *testing.T) {
	ctx := context.Background()
	h := hometest.New(t)
	p, st := hometest.Palace(t, h, topicEmbedder{}, palace.Options{})
	files := map[string]string{
		"notes/memory.md":                "# Memory\n\n## 2026-11-01 — pie\nquince pie\n",
		"alice/sessions/2026-11-01-a.md": conversation("quince and the bike", "bike", "tax", "dog"),
		"bob/sessions/2026-11-01-b.md":   conversation("quince and the tax", "tax", "garden"),
	}
	var ds []store.Drawer
	for f, text := range files {
		filetest.Write(t, filepath.Join(h.AgentsDir(), f), text)
	}
	if _, err := p.Mine(ctx, h.AgentsDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"notes/memory.md", "alice/sessions/2026-11-01-a.md", "bob/sessions/2026-11-01-b.md"} {
		got, err := st.Drawers(ctx, h.Rel(filepath.Join(h.AgentsDir(), f)))
		if err != nil || len(got) == 0 {
			t.Fatalf("drawers of %s: %v %d", f, err, len(got))
		}
		ds = append(ds, got[0]) // the quince line
	}
	qv, err := topicEmbedder{}.Embed(ctx, []string{"quince"})
	if err != nil {
		t.Fatal(err)
	}
	order, err := p.SessionVectorsOrder(ctx, qv[0], ds, []float64{1, 0.99, 0.98})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ds[0].ID, ds[1].ID, ds[2].ID}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("order %v, want the note first and the conversations as fused (%v)", order, want)
	}
}
