package palace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
)

// TestSearchWeighsConversationsLexicalAndVectorAlike: in imported
// conversations (session files) a turn that means what the question asks,
// in other words, outranks one that shares the request's words ("can you
// suggest some tips for") and is about something else; in an agent's
// notes (a memory file) the same texts keep the default weights, under
// which the shared words win. Real store, real model.
func TestSearchWeighsConversationsLexicalAndVectorAlike(t *testing.T) {
	if !app.ModelInstalled(modelfetch.DefaultDir()) {
		t.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", modelfetch.DefaultDir())
	}
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	ctx := context.Background()
	a, err := app.Open(ctx, app.Options{Home: t.TempDir(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	turns := []struct{ name, text string }{ // the first is what the question is after
		{"puppy", "I just adopted a puppy and I am new to dogs: how do I house-train him?"},
		{"cover-letter", "Can you suggest some tips for writing a cover letter?"},
		{"houseplants", "Any tips for keeping my new houseplants alive?"},
		{"banana-bread", "What is a good recipe for banana bread?"},
		{"flat-tyre", "How do I change a flat tyre on my bike?"},
		{"interest", "Can you explain how compound interest works?"},
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := "# Memory — Notes (notes)\n\n"
	for i, c := range turns {
		heading := fmt.Sprintf("2026-11-01 — talk %d", i+1) // says nothing of the subject
		write(filepath.Join(a.Home.AgentsDir(), "chats", "sessions", c.name+".md"),
			"# Conversation\n\n## "+heading+"\n- **user**: "+c.text+"\n")
		notes += "## " + heading + "\n- " + c.text + "\n\n"
	}
	write(filepath.Join(a.Home.AgentsDir(), "notes", "memory.md"), notes)
	if _, err := a.Palace.Mine(ctx, a.Home.AgentsDir(), palace.MineOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent, room string
		first       string // heading of the top hit
	}{
		{"chats", chunk.RoomSession, "2026-11-01 — talk 1"},
		{"notes", chunk.RoomRecent, "2026-11-01 — talk 2"},
	} {
		hits, err := a.Palace.Search(ctx, palace.Query{Text: "Can you suggest some tips for my new puppy?", Results: 6, Filter: store.Filter{Wing: c.agent}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Heading != c.first || hits[0].Room != c.room {
			for _, h := range hits {
				t.Logf("%s %q score %.3f (lexical %.3f, vector %.3f)", h.Room, h.Heading, h.Score, h.LexicalScore, h.VectorScore)
			}
			t.Errorf("%s: first hit %q, want %q in room %s", c.agent, firstHeading(hits), c.first, c.room)
		}
	}
}
