package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
)

// TestRequestsRefuseByKind: each operation's refusals are of the kind a
// front end maps (the API onto 400, 404, 409), whatever surface asks.
func TestRequestsRefuseByKind(t *testing.T) {
	a := openLexical(t)
	ctx := context.Background()
	hometest.WriteMemory(t, a.home, "alice", "# Memory — alice\n\n## 2026-11-20 — a note\nbody\n")
	for _, c := range []struct {
		name string
		run  func() error
		kind error
		want string
	}{
		{"mine: a path for an agent", func() error { _, err := a.Mine(ctx, MineRequest{Agent: "../x"}); return err }, ErrInvalid, "invalid agent id"},
		{"mine: an agent without a directory", func() error { _, err := a.Mine(ctx, MineRequest{Agent: "nobody"}); return err }, ErrNotFound, "no agent nobody"},
		{"mine: a path that does not exist", func() error { _, err := a.Mine(ctx, MineRequest{Path: filepath.Join(t.TempDir(), "gone")}); return err }, ErrNotFound, "no such file"},
		{"condense: no memory file", func() error { _, err := a.Condense(ctx, CondenseRequest{Agent: "nobody", DryRun: true}); return err }, ErrNotFound, "has no memory file"},
		{"condense: if_match not a sha256", func() error { _, err := a.Condense(ctx, CondenseRequest{Agent: "alice", IfMatch: "abc"}); return err }, ErrInvalid, "if_match"},
		{"condense: the file changed since the preview", func() error {
			_, err := a.Condense(ctx, CondenseRequest{Agent: "alice", IfMatch: strings.Repeat("0", 64)})
			return err
		}, ErrConflict, "changed since the preview"},
		{"condense: own scope, another agent", func() error {
			_, err := a.Condense(ctx, CondenseRequest{Agent: "alice", DryRun: true, Scope: Scope{Caller: "bob", Own: true}})
			return err
		}, ErrInvalid, "scope own"},
		{"condense: another agent's file for real", func() error {
			_, err := a.Condense(ctx, CondenseRequest{Agent: "alice", Scope: Scope{Caller: "bob"}})
			return err
		}, ErrInvalid, `writes only to agent "bob"`},
		{"backups: unknown agent", func() error { _, err := a.Backups(ctx, BackupsRequest{Agent: "nobody", Known: true}); return err }, ErrNotFound, "no memory file and no backups"},
		{"backup: a path for a name", func() error {
			_, err := a.Backup(ctx, BackupRequest{Agent: "alice", Name: "../../config.toml"})
			return err
		}, ErrInvalid, "backup name"},
		{"backup: none", func() error { _, err := a.Backup(ctx, BackupRequest{Agent: "alice", Name: "latest"}); return err }, ErrNotFound, "has no backups"},
		{"restore: no such backup", func() error {
			_, err := a.Restore(ctx, RestoreRequest{Agent: "alice", Backup: "20990101T000000Z"})
			return err
		}, ErrNotFound, "has no backups"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %v saying %q", err, c.kind, c.want)
			}
		})
	}
	// With manager.mining off, a mine that asks IfMining is refused.
	if err := os.WriteFile(a.home.ConfigPath(), []byte("[manager]\nmining = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReloadSettings(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mine(ctx, MineRequest{IfMining: true}); !errors.Is(err, ErrConflict) {
		t.Fatalf("mine with mining off: %v, want ErrConflict", err)
	}
	if _, err := a.Mine(ctx, MineRequest{}); err != nil {
		t.Fatalf("mine without IfMining, mining off: %v", err)
	}
}
