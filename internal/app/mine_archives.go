package app

import (
	"context"
	"errors"
	"os"

	"github.com/hivemem/hivemem/internal/palace"
)

// MineArchives brings the index in step with the archives of every agent
// (hive/archive), under the palace write lock: a scan's last step.
func (a *App) MineArchives(ctx context.Context) error {
	root := a.home.ArchiveRoot()
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	release, err := a.lock.Acquire(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	_, err = a.mine(ctx, root, palace.MineOptions{})
	return err
}
