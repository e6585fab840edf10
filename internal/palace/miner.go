package palace

import "context"

// Miner mines a path into an index: the palace itself, or the
// application's mine over it (which takes the palace write lock and logs
// skipped files once). It is the one interface every miner of the project
// implements: the reflector re-mines through it after a swap, an import
// mines the sessions it wrote through it.
type Miner interface {
	Mine(ctx context.Context, path string, opts MineOptions) (MineReport, error)
}
