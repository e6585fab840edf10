package manager

import (
	"context"
)

// removeOldLocks clears the hive (and the home's root) of the lock files
// versions before palace/locks left beside the files they locked, those no
// process uses any more: this version keeps its locks under palace/locks,
// so a hive kept in git stays clean. One still in use (a process of an
// earlier version) is kept, and taken by every write of this version for
// as long as it exists; the next run's start removes it.
func (m *Manager) removeOldLocks(ctx context.Context) {
	n, err := m.app.RemoveLegacyLocks(ctx)
	if err != nil {
		m.log.Warn("old lock files left in the hive", "err", err)
	}
	if n > 0 {
		m.log.Info("removed old lock files from the hive", "count", n)
	}
}
