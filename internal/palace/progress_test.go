package palace_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/palace"
)

// TestMineReportsEmbeddingProgressWithinAFile: under WithProgress a mine
// reports the files found, each file mined and each batch of drawers
// embedded, so that one big file's embedding shows progress before the
// file is done; the sums match the report, and a reindex counts on.
func TestMineReportsEmbeddingProgressWithinAFile(t *testing.T) {
	f := newFixture(t, &countingEmbedder{})
	var big strings.Builder
	big.WriteString("# Memory — big\n")
	for i := range 70 {
		fmt.Fprintf(&big, "\n## 2026-11-%02d — note %d\nthe note number %d about topic %d\n", i%28+1, i, i, i*7)
	}
	f.write("big", big.String())
	f.write("small", "# Memory — small\n\n## one\nalpha\n\n## two\nbeta\n")

	var got []palace.Progress
	ctx := palace.WithProgress(context.Background(), func(p palace.Progress) { got = append(got, p) })
	rep, err := f.p.Mine(ctx, f.h.AgentsDir(), palace.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedded < 70 {
		t.Fatalf("embedded %d drawers, want at least 70", rep.Embedded)
	}
	if len(got) == 0 || got[0].Files != 2 || got[0].FilesDone != 0 {
		t.Fatalf("first report %+v, want 2 files found, none done", got)
	}
	// The big file embeds in batches of 32: progress before it is done.
	within := 0
	for _, p := range got {
		if p.FilesDone == 0 && p.Embedded > 0 {
			within++
		}
	}
	if within < 2 {
		t.Errorf("%d reports of drawers embedded before the first file was done, want at least 2: %+v", within, got)
	}
	last := got[len(got)-1]
	if last.Files != 2 || last.FilesDone != 2 || last.Embedded != rep.Embedded {
		t.Errorf("last report %+v, want 2 of 2 files and %d embedded", last, rep.Embedded)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Embedded < got[i-1].Embedded || got[i].FilesDone < got[i-1].FilesDone {
			t.Fatalf("progress went back: %+v then %+v", got[i-1], got[i])
		}
	}

	// Without WithProgress nothing is reported; a reindex under it counts
	// its files (its vectors come from the cache, so none is embedded).
	got = nil
	if _, err := f.p.Reindex(ctx, palace.ReindexOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[len(got)-1].FilesDone != 4 || got[len(got)-1].Embedded != last.Embedded {
		t.Errorf("after the reindex: %+v, want 4 files done in all and %d embedded", got, last.Embedded)
	}
}
