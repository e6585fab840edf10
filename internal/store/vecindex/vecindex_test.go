package vecindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/storetest"
)

func TestSearchMatchesBruteForceAfterPutsAndRemoves(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			if parallel {
				old := ParallelMin
				ParallelMin = 16
				t.Cleanup(func() { ParallelMin = old })
			}
			const dim = 8
			rng := rand.New(rand.NewPCG(1, 2))
			// Few distinct values so that ties are common.
			vec := func() []float32 {
				v := make([]float32, dim)
				for i := range v {
					v[i] = float32(rng.IntN(3) - 1)
				}
				return v
			}
			x := New(dim, 0)
			ref := map[string]store.Drawer{}
			dates := []string{"", "2026-01-02", "2026-03-04", "2025-12-31"}
			for i := range 400 {
				id := fmt.Sprintf("d%03d", rng.IntN(300))
				switch i % 5 {
				case 4:
					x.Remove(id)
					delete(ref, id)
				default:
					r := Row{ID: id, Wing: fmt.Sprintf("w%d", rng.IntN(3)), Room: fmt.Sprintf("r%d", rng.IntN(2)),
						Agent: fmt.Sprintf("a%d", rng.IntN(2)), Date: dates[rng.IntN(len(dates))], Vec: vec()}
					var err error
					if i%2 == 0 {
						err = x.Put(r)
					} else {
						err = x.PutEncoded(r.ID, r.Wing, r.Room, r.Agent, r.Date, Encode(r.Vec))
					}
					if err != nil {
						t.Fatal(err)
					}
					ref[id] = store.Drawer{ID: id, Wing: r.Wing, Room: r.Room, Agent: r.Agent, Date: r.Date, Vector: r.Vec}
				}
			}
			if err := x.Check(); err != nil {
				t.Fatal(err)
			}
			if x.Len() != len(ref) {
				t.Fatalf("Len = %d, want %d", x.Len(), len(ref))
			}
			for id, want := range ref {
				got, ok := x.Row(id)
				if !ok || got.Wing != want.Wing || got.Room != want.Room || got.Agent != want.Agent || got.Date != want.Date || !slices.Equal(got.Vec, want.Vector) {
					t.Fatalf("Row(%q) = %+v, %v; want %+v", id, got, ok, want)
				}
			}
			filters := []store.Filter{{}, {Wing: "w1"}, {Wing: "w0", Room: "r1"}, {Agent: "a0"}, {Since: "2026-01-01"},
				{Until: "2026-01-02"}, {Since: "2026-01-03", Until: "2026-12-31", Wing: "w2"}, {Wing: "never"}}
			for _, f := range filters {
				for _, k := range []int{1, 5, 50, 1000} {
					q := vec()
					got, want := x.Search(q, f, k), storetest.BruteForce(ref, q, f, k)
					if !slices.Equal(got, want) {
						t.Errorf("Search(%+v, k=%d):\n got %v\nwant %v", f, k, got, want)
					}
				}
			}
		})
	}
}

func TestPutRefusesAVectorOfAnotherDimension(t *testing.T) {
	x := New(4, 0)
	if err := x.Put(Row{ID: "a", Vec: []float32{1, 2}}); err == nil {
		t.Error("Put of a 2-dimensional vector into a 4-dimensional index succeeded")
	}
	if err := x.PutEncoded("a", "", "", "", "", make([]byte, 7)); err == nil {
		t.Error("PutEncoded of a 7-byte vector succeeded")
	}
	if x.Len() != 0 {
		t.Errorf("Len = %d after refused puts", x.Len())
	}
	if got := x.Search([]float32{1, 0}, store.Filter{}, 3); got != nil {
		t.Errorf("Search with a query of another dimension = %v", got)
	}
}

func TestSetMetaMovesADrawerBetweenScopes(t *testing.T) {
	x := New(2, 0)
	if err := x.Put(Row{ID: "a", Wing: "w1", Vec: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	x.SetMeta("a", "w2", "", "", "2026-05-06")
	x.SetMeta("absent", "w2", "", "", "") // not in the index: ignored
	if got := x.Search([]float32{1, 0}, store.Filter{Wing: "w1"}, 3); len(got) != 0 {
		t.Errorf("old wing still finds it: %v", got)
	}
	if got := x.Search([]float32{1, 0}, store.Filter{Wing: "w2", Since: "2026-05-06"}, 3); len(got) != 1 || got[0].ID != "a" {
		t.Errorf("new wing and date: %v", got)
	}
	if x.Len() != 1 {
		t.Errorf("Len = %d", x.Len())
	}
}

func TestCheckFiniteRefusesNaNAndInfinity(t *testing.T) {
	var zero float32
	for _, v := range [][]float32{{1, zero / zero}, {-1 / zero}} {
		if err := CheckFinite(v); err == nil {
			t.Errorf("CheckFinite(%v) = nil", v)
		}
	}
	if err := CheckFinite([]float32{1, -2}); err != nil {
		t.Error(err)
	}
}
