package palace

import (
	"context"
	"sync"
)

// Progress is how far the mining under a WithProgress context has got,
// summed over every Mine in it (a reindex mines the hive, then each file
// mined from outside it).
type Progress struct {
	Files     int // files found to mine so far
	FilesDone int // files mined
	Embedded  int // drawers embedded (cache hits not counted)
}

type progressKey struct{}

type progressState struct {
	mu sync.Mutex
	p  Progress
	fn func(Progress)
}

// WithProgress returns a context under which Mine, and everything that
// mines through it (Reindex, Remember, a benchmark), reports its progress
// to fn: after the files are found, after each file and after each batch
// of drawers embedded, so that a long embedding shows progress within a
// file. fn runs on the mining goroutine and must be quick.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, &progressState{fn: fn})
}

// progress updates the context's progress, if it has one, and reports it.
func progress(ctx context.Context, update func(*Progress)) {
	st, ok := ctx.Value(progressKey{}).(*progressState)
	if !ok {
		return
	}
	st.mu.Lock()
	update(&st.p)
	p := st.p
	st.mu.Unlock()
	st.fn(p)
}
