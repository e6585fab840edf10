package app

import (
	"context"
	"fmt"

	"github.com/hivemem/hivemem/internal/palace"
)

// mine is the one way the app mines path: through the palace (and
// Options.MineHook), its skips logged once (reportSkips) unless the caller
// reports them itself (opts.ReportsSkips). Every mine of the process goes
// through it — the manager's, the app's own after a remember, a pin or a
// forget, the reflector's after a swap — so that a memory file that stays
// skipped is logged once, not at every call. The caller holds the palace
// write lock.
func (a *App) mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	report := !opts.ReportsSkips
	opts.ReportsSkips = true
	rep, err := a.minePalace(ctx, path, opts)
	if report {
		a.reportSkips(path, rep.Skipped, err == nil)
	}
	return rep, err
}

func (a *App) minePalace(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	if a.mineHook == nil {
		return a.palace.Mine(ctx, path, opts)
	}
	// The hook sees the app's result; the palace's report of the mine it
	// let run (none when it failed instead) goes back to the caller.
	var rep palace.MineReport
	_, err := a.mineHook(ctx, path, func(ctx context.Context) (MineResult, error) {
		r, err := a.palace.Mine(ctx, path, opts)
		rep = r
		return MineResult{Path: a.home.Rel(path), Report: mineReportOf(r)}, err
	})
	return rep, err
}

// swapMiner is the reflector's miner: the mine that follows a swap, under
// the palace write lock (taken for that mine only, never while a
// summariser runs). That mine is of a file that has changed, not part of
// the condensation: under a context from KeepSwapMines (a running
// manager's pass or request) it goes on when its caller's context ends
// and ends only with the work context given there. Cancelled with its
// caller, it would leave the index describing the file as it was before
// the swap until the next start.
type swapMiner struct{ a *App }

func (sm swapMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	if work, ok := ctx.Value(swapWorkKey{}).(context.Context); ok {
		mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		defer context.AfterFunc(work, cancel)()
		ctx = mctx
	}
	release, err := sm.a.AcquireLock(ctx)
	if err != nil {
		return palace.MineReport{}, fmt.Errorf("mine %s: %w", path, err)
	}
	defer release()
	return sm.a.mine(ctx, path, opts)
}

type swapWorkKey struct{}

// KeepSwapMines returns ctx carrying work: the mine after a condensation's
// swap, started under it, goes on when ctx ends (a pass cancelled by a
// shutdown, a request gone) until work ends (the shutdown grace of a
// running manager).
func KeepSwapMines(ctx, work context.Context) context.Context {
	return context.WithValue(ctx, swapWorkKey{}, work)
}
