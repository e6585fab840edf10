package sqlq

import (
	"slices"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
)

func TestWhereRendersEachDialect(t *testing.T) {
	all := store.Filter{Wing: "w", Room: "r", Agent: "a", Since: "2026-01-01", Until: "2026-02-01"}
	for _, tc := range []struct {
		name  string
		dl    Dialect
		f     store.Filter
		next  int
		where string
		args  []any
	}{
		{"sqlite empty", SQLite, store.Filter{}, 1, "", nil},
		{"postgres empty", Postgres, store.Filter{}, 3, "", nil},
		{"sqlite all", SQLite, all, 1,
			" AND d.wing = ? AND d.room = ? AND d.agent = ? AND d.date >= ? AND d.date <= ? AND d.date <> ''",
			[]any{"w", "r", "a", "2026-01-01", "2026-02-01"}},
		{"postgres all from 9", Postgres, all, 9,
			` AND d.wing = $9 AND d.room = $10 AND d.agent = $11 AND d.date >= $12 COLLATE "C" AND d.date <= $13 COLLATE "C" AND d.date <> ''`,
			[]any{"w", "r", "a", "2026-01-01", "2026-02-01"}},
		{"postgres room and until", Postgres, store.Filter{Room: "r", Until: "2026-02-01"}, 2,
			` AND d.room = $2 AND d.date <= $3 COLLATE "C" AND d.date <> ''`, []any{"r", "2026-02-01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			where, args := Where(tc.dl, tc.f, tc.next)
			if where != tc.where || !slices.Equal(args, tc.args) {
				t.Errorf("Where = %q %v\nwant    %q %v", where, args, tc.where, tc.args)
			}
		})
	}
}
