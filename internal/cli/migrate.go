package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/wiring"
)

// migrateReport is `hivemem migrate`.
type migrateReport struct {
	Backend    string `json:"backend"`
	Target     string `json:"target,omitempty"` // user@host:port/db for PostgreSQL (never the password)
	From       int    `json:"from_version,omitempty"`
	To         int    `json:"to_version,omitempty"`
	VectorMode string `json:"vector_mode"`
}

// migratedStore is a store on a server (PostgreSQL), which names where
// it is and the schema versions its open migrated from and to.
type migratedStore interface {
	Target() string
	Migrated() (from, to int)
}

func newMigrateCommand(g *globals) *cobra.Command {
	cmd := jsonCommand("migrate", "Create or upgrade the palace schema (idempotent; every command also does it on open)", cobra.NoArgs,
		func(ctx context.Context, _ []string, asJSON bool) error { return runMigrate(ctx, g, asJSON) })
	cmd.Long = "Create or upgrade the palace's schema: with backend = \"postgres\" the tables, indexes and (where the server has it) the pgvector extension; " +
		"with SQLite the database file. Safe to run again and from several machines at once; a schema newer than this binary is refused."
	return cmd
}

func runMigrate(ctx context.Context, g *globals, asJSON bool) error {
	h, cfg, err := g.homeConfig()
	if err != nil {
		return err
	}
	st, err := wiring.OpenStore(ctx, h, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	stats, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	r := migrateReport{Backend: st.Backend(), VectorMode: stats.VectorMode}
	if p, ok := st.(migratedStore); ok { // PostgreSQL
		r.Target = p.Target()
		r.From, r.To = p.Migrated()
	}
	if asJSON {
		return writeJSON(g.stdout, r)
	}
	switch {
	case r.Target == "":
		fmt.Fprintf(g.stdout, "%s palace schema is up to date (vector search: %s)\n", r.Backend, r.VectorMode)
	case r.From == r.To:
		fmt.Fprintf(g.stdout, "postgres palace %s: schema version %d, already up to date (vector search: %s)\n", r.Target, r.To, r.VectorMode)
	default:
		fmt.Fprintf(g.stdout, "postgres palace %s: schema migrated from version %d to %d (vector search: %s)\n", r.Target, r.From, r.To, r.VectorMode)
	}
	return nil
}
