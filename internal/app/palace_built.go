package app

import "github.com/hivemem/hivemem/internal/palace"

// palaceBuilt is an Index that is told of every palace the app builds
// over what it opened (a lexical-only rebuild too). A benchmark's
// composition root (wiring.OpenBench) is one: it measures retrieval on
// the very palace the app's own operations search and mine with, built
// with the same settings, origin and gate. No front end holds one.
type palaceBuilt interface {
	PalaceBuilt(p *palace.Palace)
}

// tellPalaceBuilt tells the app's Index of p, when it asks to be told.
func (a *App) tellPalaceBuilt(p *palace.Palace) {
	if pb, ok := a.idx.(palaceBuilt); ok {
		pb.PalaceBuilt(p)
	}
}
