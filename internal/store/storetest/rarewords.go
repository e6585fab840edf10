package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/store"
)

// RareWordsPalace is files files of per drawers shaped like the
// Search100k benchmark's palace: words "deploy0".."deploy<rare-1>" each in
// few drawers, filler in nearly all of them (pruned from queries), a
// middling word in about 15 % and a common one in about 40 %, and six
// distinct lengths, so that scores tie often, at the k-th rank too.
// Drawers are spread over 40 wings, two rooms (a tenth in "archive"), two
// agents and 100 days from 2026-01-01; their ids sort in another order than
// they are inserted in, so that ties broken by insertion order would show.
func RareWordsPalace(files, per, rare int) []store.FileUpdate {
	rng := rand.New(rand.NewPCG(11, 12))
	filler := strings.Fields("the a we then after before fixed found checked service handler test config error value team")
	out := make([]store.FileUpdate, 0, files)
	for f := range files {
		src := fmt.Sprintf("f%d.md", f)
		u := store.FileUpdate{File: store.File{Source: src, Hash: src, Size: 1, MinedAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}}
		for i := range per {
			at := f*per + i
			ws := make([]string, 20+rng.IntN(6))
			for j := range ws {
				switch r := rng.IntN(40); {
				case r < 4:
					ws[j] = fmt.Sprintf("deploy%d", rng.IntN(rare))
				case r == 4 && at%5 == 0:
					ws[j] = "middling"
				case r == 5:
					ws[j] = "common"
				default:
					ws[j] = filler[rng.IntN(len(filler))]
				}
			}
			room := "recent"
			if i%10 == 0 {
				room = "archive"
			}
			u.Insert = append(u.Insert, store.Drawer{
				ID: fmt.Sprintf("d%06d", at*7919%(files*per)), Source: src, Wing: fmt.Sprintf("w%d", at%40), Room: room,
				Agent: []string{"ada", "bob"}[f%2], Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, at*100/(files*per)).Format(time.DateOnly),
				LineStart: i + 1, LineEnd: i + 1, Hash: fmt.Sprint(at), Heading: "note", Text: strings.Join(ws, " "),
			})
		}
		out = append(out, u)
	}
	return out
}

// RareWordsQueries are queries over RareWordsPalace(8, 500, 60): rare words
// only, rare words with the middling or common word, filler, and a word no
// drawer holds.
var RareWordsQueries = []string{
	"deploy7", "deploy7 deploy19", "deploy3 deploy41 handler", "deploy5 deploy6 deploy7 deploy8",
	"deploy12 middling", "deploy12 common", "deploy44 common handler", "deploy12 deploy13 common",
	"middling common", "deploy30 middling common the",
	"handler", "nothing0",
}

// RareWordsFilters are filters over RareWordsPalace: scopes of every
// drawer, most, half, a tenth and few, and date bounds of most and few,
// alone and with a large scope.
var RareWordsFilters = []store.Filter{
	{}, {Room: "recent"}, {Agent: "ada"}, {Room: "archive"}, {Wing: "w7"},
	{Since: "2026-01-11"}, {Since: "2026-02-01", Until: "2026-02-05"},
	{Since: "2026-01-11", Room: "recent"}, {Since: "2026-02-01", Until: "2026-02-05", Room: "recent"},
	{Until: "2026-03-01", Agent: "bob"},
}
