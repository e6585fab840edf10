package app

import (
	"context"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/store"
)

// SearchChoices are what a search form offers to filter by.
type SearchChoices struct {
	Agents []string `json:"agents"` // the home's agents
	Wings  []string `json:"wings"`  // the index's wings
	Rooms  []string `json:"rooms"`  // the rooms hivemem mines into
	// Lexical: no embedding model is installed, search is by keywords.
	Lexical bool `json:"lexical"`
}

// SearchChoices lists what a search can be filtered by. A list that cannot
// be read (the index unreachable) is left empty: the form still works.
func (a *App) SearchChoices(ctx context.Context) SearchChoices {
	c := SearchChoices{Rooms: []string{chunk.RoomRecent, chunk.RoomPinned, chunk.RoomCondensed, chunk.RoomArchive, chunk.RoomHeader},
		Lexical: a.palace.Embedder() == nil}
	c.Agents, _ = a.home.Agents()
	if st, err := a.store.Stats(ctx); err == nil {
		for _, w := range st.Wings {
			c.Wings = append(c.Wings, w.Wing)
		}
	}
	return c
}

// QueryTerms are the words a search for q matches, to mark in a text
// shown for it (lowercased, stopwords dropped as search drops them).
func QueryTerms(q string) []string { return store.QueryTerms(q) }
