package wiring

import (
	"context"
	"errors"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

// Bench is a retrieval benchmark's home opened: the app, and the palace
// it built over the index, the one its own operations search and mine
// with (same settings, origin and gate), on which the benchmark
// measures. Only a benchmark's composition holds the palace; a front end
// speaks to the app.
type Bench struct {
	App    *app.App
	Palace *palace.Palace
}

// OpenBench is OpenLoaded for a retrieval benchmark (internal/bench/…),
// which measures on the app's palace too.
func OpenBench(ctx context.Context, h home.Home, cfg config.Config, opts Options) (Bench, error) {
	x := &benchIndex{index: index{h: h, cfg: cfg, warm: opts.LongRunning}}
	a, err := app.New(ctx, app.Options{
		Home: h, Config: cfg, Logger: opts.Logger, Command: opts.Command, LockWaiting: opts.LockWaiting,
		MineHook: opts.MineHook, Index: x,
	})
	if err != nil {
		return Bench{}, err
	}
	if x.p == nil {
		a.Close()
		return Bench{}, errors.New("bench: the app built no palace")
	}
	return Bench{App: a, Palace: x.p}, nil
}

// benchIndex is the index of OpenBench: it keeps the palace the app built
// over it (the last one: a lexical-only rebuild replaces it).
type benchIndex struct {
	index
	p *palace.Palace
}

// PalaceBuilt keeps p (app tells every Index that has this method).
func (x *benchIndex) PalaceBuilt(p *palace.Palace) { x.p = p }
