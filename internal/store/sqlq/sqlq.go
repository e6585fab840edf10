// Package sqlq is the SQL the SQL backends share: a store.Filter as WHERE
// conditions (one builder for every dialect, so that the backends cannot
// drift in what a filter means) and the loops that read ranked rows,
// drawers and cached embeddings.
package sqlq

import (
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/vecindex"
)

// Dialect is how a backend's SQL spells what the filter needs.
type Dialect struct {
	// Placeholder is the parameter marker for the n-th argument (1-based).
	Placeholder func(n int) string
	// DateCompare follows a date bound's placeholder, so that dates compare
	// byte by byte (as strings in Go) whatever the database's collation.
	DateCompare string
}

// SQLite uses ? markers; its default collation is byte order already.
var SQLite = Dialect{Placeholder: func(int) string { return "?" }}

// Postgres uses numbered $n markers and compares dates in the C collation.
var Postgres = Dialect{Placeholder: func(n int) string { return fmt.Sprintf("$%d", n) }, DateCompare: ` COLLATE "C"`}

// Where returns " AND cond AND ..." over the drawers table aliased d, and
// its arguments, numbered from next on (in dialects that number them); ""
// and nil for a filter that admits everything. A drawer without a date is
// outside any date bound, as in store.Filter.Matches.
func Where(dl Dialect, f store.Filter, next int) (string, []any) {
	var conds []string
	var args []any
	add := func(col, op, suffix string, v any) {
		conds = append(conds, "d."+col+" "+op+" "+dl.Placeholder(next+len(args))+suffix)
		args = append(args, v)
	}
	if f.Wing != "" {
		add("wing", "=", "", f.Wing)
	}
	if f.Room != "" {
		add("room", "=", "", f.Room)
	}
	if f.Agent != "" {
		add("agent", "=", "", f.Agent)
	}
	if f.Since != "" {
		add("date", ">=", dl.DateCompare, f.Since)
	}
	if f.Until != "" {
		add("date", "<=", dl.DateCompare, f.Until)
	}
	if f.Since != "" || f.Until != "" {
		conds = append(conds, "d.date <> ''")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// Rows is what Scored reads: a *sql.Rows or a pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Scored reads (id, score) rows, in the order given, ranked from 1.
func Scored(rows Rows) ([]store.Scored, error) {
	var out []store.Scored
	for rows.Next() {
		var sc store.Scored
		if err := rows.Scan(&sc.ID, &sc.Score); err != nil {
			return nil, err
		}
		sc.Rank = len(out) + 1
		out = append(out, sc)
	}
	return out, rows.Err()
}

// Drawers reads rows of the drawer columns id, wing, room, agent, source,
// heading, line_start, line_end, date, hash and text, in that order.
func Drawers(rows Rows) ([]store.Drawer, error) {
	var out []store.Drawer
	for rows.Next() {
		var d store.Drawer
		if err := rows.Scan(&d.ID, &d.Wing, &d.Room, &d.Agent, &d.Source, &d.Heading, &d.LineStart, &d.LineEnd, &d.Date, &d.Hash, &d.Text, &d.SupersededBy); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Embeddings reads (hash, vector) rows of the embedding cache into out.
func Embeddings(rows Rows, out map[string][]float32) error {
	for rows.Next() {
		var h string
		var b []byte
		if err := rows.Scan(&h, &b); err != nil {
			return err
		}
		out[h] = vecindex.AppendDecoded(make([]float32, 0, len(b)/4), b)
	}
	return rows.Err()
}
