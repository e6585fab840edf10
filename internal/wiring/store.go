package wiring

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/postgres"
	"github.com/hivemem/hivemem/internal/store/sqlite"
)

// OpenStore opens the configured index backend.
func OpenStore(ctx context.Context, h home.Home, cfg config.Config) (store.Store, error) {
	switch cfg.Palace.Backend {
	case "sqlite":
		// The index is the home's too: never through a link out of it.
		if err := h.MkdirAll(h.PalaceDir()); err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		db := sqlitePath(h)
		if _, err := h.Contain(db); err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		return sqlite.Open(ctx, db)
	case "postgres":
		return postgres.Open(ctx, PostgresOptions(cfg))
	default:
		return nil, fmt.Errorf("open palace: backend %q is not available in this build", cfg.Palace.Backend)
	}
}

// sqlitePath is where the SQLite backend keeps the index of h.
func sqlitePath(h home.Home) string { return filepath.Join(h.PalaceDir(), "palace.db") }

// PostgresOptions are the postgres store's options from the config.
func PostgresOptions(cfg config.Config) postgres.Options {
	p := cfg.Palace
	return postgres.Options{DSN: p.DSN, MaxConns: p.MaxConns, StatementTimeout: p.StatementTimeout.Duration, VectorMode: p.VectorMode, EfSearch: p.HNSWEfSearch}
}

// IndexDamaged reports whether err (from opening or using the index) says
// the SQLite index file is damaged; `hivemem reindex` then sets it aside
// and rebuilds it from the markdown.
func IndexDamaged(err error) bool { return sqlite.Damaged(err) }

// SetAsideIndex moves a damaged SQLite index out of the way (kept beside
// it as palace.db.damaged-<time>) so that the next open starts an empty
// one. Only the SQLite backend keeps its index in the home.
func SetAsideIndex(h home.Home, now time.Time) (string, error) {
	return sqlite.SetAside(sqlitePath(h), now)
}
