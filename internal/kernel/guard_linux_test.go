//go:build linux

package kernel

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guarded returns a slice of n floats copied from src whose last element
// sits right before an inaccessible page, so a kernel that reads or writes
// even one float past the end crashes the test instead of passing by luck.
func guarded(t *testing.T, src []float32) []float32 {
	t.Helper()
	page := unix.Getpagesize()
	size := (len(src)*4+page-1)/page*page + page
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-page:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	end := size - page
	if len(src) == 0 {
		return []float32{}
	}
	s := unsafe.Slice((*float32)(unsafe.Pointer(&mem[end-4*len(src)])), len(src))
	copy(s, src)
	return s
}

// TestNoOverrun runs every entry point on operands that end at a guard page.
func TestNoOverrun(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	forEachImpl(t, func(t *testing.T) {
		for n := 0; n <= 40; n++ {
			a := guarded(t, randVec(rng, n, 0))
			b := guarded(t, randVec(rng, n, 0))
			want, mag := refDot(a, b)
			if got := Dot(a, b); !near(got, want, mag) {
				t.Fatalf("Dot n=%d = %v, want %v", n, got, want)
			}
		}
		for _, d := range []int{1, 7, 8, 9, 17, 24} {
			for rows := 1; rows <= 9; rows++ {
				q := guarded(t, randVec(rng, d, 0))
				vecs := guarded(t, randVec(rng, rows*d, 0))
				out := guarded(t, make([]float32, rows))
				DotBatch(out, q, vecs, d)
				for i := range out {
					want, mag := refDot(q, vecs[i*d:(i+1)*d])
					if !near(out[i], want, mag) {
						t.Fatalf("DotBatch rows=%d d=%d row %d = %v, want %v", rows, d, i, out[i], want)
					}
				}
			}
		}
		for _, s := range []shape{{1, 1, 1}, {3, 4, 7}, {4, 5, 9}, {7, 9, 17}, {6, 8, 16}, {5, 6, 3}} {
			a := guarded(t, randVec(rng, s.m*s.k, 0))
			b := guarded(t, randVec(rng, s.n*s.k, 0))
			c := guarded(t, make([]float32, s.m*s.n))
			MatMulT(c, a, b, s.m, s.n, s.k)
			for i := 0; i < s.m; i++ {
				for j := 0; j < s.n; j++ {
					want, mag := refDot(a[i*s.k:(i+1)*s.k], b[j*s.k:(j+1)*s.k])
					if !near(c[i*s.n+j], want, mag) {
						t.Fatalf("MatMulT %v: c[%d][%d] = %v, want %v", s, i, j, c[i*s.n+j], want)
					}
				}
			}
		}
	})
}

// TestMatMulPackedNoOverrun runs the packed matrix multiply on A and C that
// end at a guard page, with row counts on and off the strip height.
func TestMatMulPackedNoOverrun(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	forEachImpl(t, func(t *testing.T) {
		for _, s := range []shape{{1, 1, 1}, {6, 16, 3}, {12, 32, 5}, {13, 33, 7}, {24, 40, 9}, {5, 70, 17}} {
			a := guarded(t, randVec(rng, s.m*s.k, 0))
			b := randVec(rng, s.n*s.k, 0)
			p, err := Pack(b, nil, s.n, s.k)
			if err != nil {
				t.Fatal(err)
			}
			c := guarded(t, make([]float32, s.m*s.n))
			MatMulPacked(c, a, p, s.m)
			for i := 0; i < s.m; i++ {
				for j := 0; j < s.n; j++ {
					want, mag := refDot(a[i*s.k:(i+1)*s.k], b[j*s.k:(j+1)*s.k])
					if !near(c[i*s.n+j], want, mag) {
						t.Fatalf("MatMulPacked %v: c[%d][%d] = %v, want %v", s, i, j, c[i*s.n+j], want)
					}
				}
			}
		}
	})
}
