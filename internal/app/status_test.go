package app

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/palace"
)

// TestDrawersWrittenBeforeTheModelAreCountedThenEmbedded: notes remembered
// while no model was installed have no vector. Once the model is there,
// status counts them (next to "hybrid"), and the next mine — of a file
// that did not change — embeds them, after which a search by meaning
// finds them.
func TestDrawersWrittenBeforeTheModelAreCountedThenEmbedded(t *testing.T) {
	requireModel(t)
	model := modelfetch.DefaultDir()
	ctx := context.Background()
	root := t.TempDir()
	t.Setenv("HIVEMEM_EMBEDDER_PROVIDER", "auto")
	t.Setenv("HIVEMEM_MODEL_DIR", filepath.Join(t.TempDir(), "no-model"))
	before, err := openTest(ctx, root, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []RememberRequest{
		{Agent: "pat", Heading: "car", Text: "The mechanic replaced the brake pads and rotated the tyres."},
		{Agent: "pat", Heading: "garden", Text: "Planted tomatoes and basil in the raised beds behind the house."},
	} {
		if _, err := before.Remember(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if before.palace.Mode() != palace.ModeLexical {
		t.Fatalf("mode without the model = %s, want lexical", before.palace.Mode())
	}
	before.Close()

	t.Setenv("HIVEMEM_MODEL_DIR", model)
	a := openAt(t, root)
	st, err := a.Status(ctx, StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Search != palace.ModeHybrid || st.Index.Drawers != 2 || st.Index.Vectors != 0 || st.WithoutVectors != 2 {
		t.Fatalf("status with the model, before a mine: search %s, %d drawers, %d vectors, %d without: want hybrid, 2, 0, 2",
			st.Search, st.Index.Drawers, st.Index.Vectors, st.WithoutVectors)
	}
	const q = "automobile repair shop visit" // shares no word with the note
	if hits, err := a.palace.Search(ctx, palace.Query{Text: q, Mode: palace.ModeVector}); err != nil || len(hits) != 0 {
		t.Fatalf("vector search before any vector: %v, %v", hits, err)
	}

	res, err := a.Mine(ctx, MineRequest{Agent: "pat"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Changed != 0 || res.Report.Embedded != 2 {
		t.Errorf("mine of the unchanged file: %d changed, %d embedded; want 0 and 2", res.Report.Changed, res.Report.Embedded)
	}
	st, err = a.Status(ctx, StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Index.Vectors != 2 || st.WithoutVectors != 0 {
		t.Errorf("status after the mine: %d vectors, %d without; want 2 and 0", st.Index.Vectors, st.WithoutVectors)
	}
	hits, err := a.palace.Search(ctx, palace.Query{Text: q, Mode: palace.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Heading == "" || hits[0].Text != "The mechanic replaced the brake pads and rotated the tyres." {
		t.Errorf("search by meaning after the mine: %+v, want the car note first", hits)
	}
}
