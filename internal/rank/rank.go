// Package rank holds the ranking rules of a search as pure functions over
// values: the fusion of the lexical and vector rankings, the lift of a
// conversation with several matches or near the query as a whole, the
// date stage, the folding of archive twins, and Supersession with its
// placement. palace.Search fetches the candidates and what the rules
// need (drawers, vectors) and calls them in order; nothing here reads a
// store, a file or the clock.
package rank

import "github.com/hivemem/hivemem/internal/store"

// Ranked is a drawer with the fused scores that rank it.
type Ranked struct {
	Drawer store.Drawer
	Fused  Fused
}
