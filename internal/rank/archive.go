package rank

import (
	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/store"
)

// FoldArchiveTwins makes one hit of a section that is both in an agent's
// archive and in its memory file — as after a restore, which puts back
// sections the archive keeps (it is append-only): the archive drawer
// whose heading and text are those of a live drawer of the same agent is
// dropped, and the live copy takes the better rank of the two.
func FoldArchiveTwins(rs []Ranked) []Ranked {
	type key struct{ agent, heading, hash string }
	keyOf := func(d store.Drawer) key {
		a := d.Agent
		if a == "" {
			a = d.Wing
		}
		return key{a, d.Heading, d.Hash}
	}
	live := map[key]int{} // index of the live copy
	for i, r := range rs {
		if r.Drawer.Room != chunk.RoomArchive && r.Drawer.Hash != "" {
			if _, ok := live[keyOf(r.Drawer)]; !ok {
				live[keyOf(r.Drawer)] = i
			}
		}
	}
	out := make([]Ranked, 0, len(rs))
	moved := map[int]bool{}
	for i, r := range rs {
		if moved[i] {
			continue
		}
		if r.Drawer.Room == chunk.RoomArchive {
			if j, ok := live[keyOf(r.Drawer)]; ok {
				if j > i && !moved[j] {
					out = append(out, rs[j]) // the live copy, at the archive's rank
					moved[j] = true
				}
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
