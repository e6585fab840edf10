package app

import (
	"context"

	"github.com/hivemem/hivemem/internal/palace"
)

// MineProgress is how far a mine has got: what a front end's progress
// bar shows.
type MineProgress struct {
	Files     int `json:"files"`      // files found to mine so far
	FilesDone int `json:"files_done"` // files mined
	Embedded  int `json:"embedded"`   // drawers embedded (cache hits not counted)
}

// WithMineProgress returns a context under which every operation that
// mines (Mine, Import, Reindex, a write, a benchmark) reports its
// progress to fn: after the files are found, after each file and after
// each batch of drawers embedded. fn runs on the mining goroutine and
// must be quick.
func WithMineProgress(ctx context.Context, fn func(MineProgress)) context.Context {
	return palace.WithProgress(ctx, func(p palace.Progress) {
		fn(MineProgress{Files: p.Files, FilesDone: p.FilesDone, Embedded: p.Embedded})
	})
}
