package app

import (
	"context"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// RemoveLegacyLocks clears the hive (and the home's root) of the lock
// files versions before palace/locks left beside the files they locked,
// those no process uses any more, and says how many went. One still in
// use (a process of an earlier version) is kept.
func (a *App) RemoveLegacyLocks(ctx context.Context) (int, error) {
	h := a.home
	n, err := atomicio.RemoveLegacyLocks(ctx, h.HiveDir())
	if ok, cerr := atomicio.RemoveLegacyLockOf(ctx, h.ConfigPath()); ok {
		n++
	} else if cerr != nil && err == nil {
		err = cerr
	}
	return n, err
}
