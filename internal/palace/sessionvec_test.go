package palace

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/sqlite"
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

// A conversation about the query throughout outranks one with a single
// matching exchange among others (sessionVectors); memory files, and a
// search that sees one conversation only, keep their order.
func TestSessionVectorsLiftTheConversationNearestTheQuery(t *testing.T) {
	// alice's best exchange is the strongest single match; bob's whole
	// conversation is about quinces.
	alice := []string{"quince jam", "fixed the bike", "paid the tax", "walked the dog", "bike lights"}
	bob := []string{"quince tree in the garden", "picked a quince", "quince jelly", "quince and the dog"}
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
			h := home.Home{Root: t.TempDir()}
			if err := h.Init(); err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			p, err := New(ctx, h, st, topicEmbedder{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			texts := map[string][]string{"alice": alice, "bob": bob}
			for _, a := range c.agents {
				var b strings.Builder
				b.WriteString("# Session\n\n")
				for i, x := range texts[a] {
					b.WriteString("## 2026-11-01 10:0" + string(rune('0'+i)) + " — exchange\n- **user**: " + x + "\n\n")
				}
				path := filepath.Join(h.AgentsDir(), a, c.file)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Mine(ctx, h.AgentsDir(), MineOptions{}); err != nil {
				t.Fatal(err)
			}
			// Each agent's first drawer as ranked by the fusion: alice's
			// ahead by a little.
			var rs []rankedDrawer
			for i, a := range c.agents {
				ds, err := st.Drawers(ctx, h.Rel(filepath.Join(h.AgentsDir(), a, c.file)))
				if err != nil || len(ds) == 0 {
					t.Fatalf("drawers of %s: %v %d", a, err, len(ds))
				}
				rs = append(rs, rankedDrawer{ds[0], Fused{ID: ds[0].ID, Score: 1 - 0.1*float64(i)}})
			}
			qv, err := topicEmbedder{}.Embed(ctx, []string{"quince"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.sessionVectors(ctx, qv[0], rs, sessionVectorWeight)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(rs) {
				t.Fatalf("%d drawers out of %d", len(out), len(rs))
			}
			if out[0].d.Agent != c.wantTop {
				for _, r := range out {
					t.Logf("%s %s score %.3f", r.d.Agent, r.d.Room, r.f.Score)
				}
				t.Fatalf("first drawer is %s's, want %s's", out[0].d.Agent, c.wantTop)
			}
		})
	}
}

// A store that fails is an error of the search, not a silent reorder.
func TestSessionVectorsReportAStoreError(t *testing.T) {
	ctx := context.Background()
	h := home.Home{Root: t.TempDir()}
	if err := h.Init(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(h.PalaceDir(), "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, h, st, topicEmbedder{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	rs := []rankedDrawer{
		{store.Drawer{ID: "a", Source: "a.md", Room: "session"}, Fused{ID: "a", Score: 1}},
		{store.Drawer{ID: "b", Source: "b.md", Room: "session"}, Fused{ID: "b", Score: 0.9}},
	}
	if _, err := p.sessionVectors(ctx, make([]float32, len(topics)+1), rs, sessionVectorWeight); err == nil || !strings.Contains(err.Error(), "session vectors") {
		t.Fatalf("closed store: err = %v", err)
	}
}
