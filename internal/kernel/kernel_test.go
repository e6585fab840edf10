package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

type impl struct {
	name        string
	asm, avx512 bool
}

// impls lists the code paths; an assembly one is skipped where the CPU
// lacks its instructions (or the architecture has no assembly).
var impls = []impl{{"go", false, false}, {"avx2", true, false}, {"avx512", true, true}}

// withImpl runs f with the portable or AVX2 path forced, restoring the
// default after.
func withImpl(tb testing.TB, asm bool, f func()) {
	tb.Helper()
	withKernel(tb, impl{asm: asm}, f)
}

// withKernel runs f with the given path forced, restoring the default after.
func withKernel(tb testing.TB, im impl, f func()) {
	tb.Helper()
	if im.asm && !hasAsm {
		tb.Skip("no AVX2+FMA assembly on this machine")
	}
	if im.avx512 && !hasAVX512 {
		tb.Skip("no AVX-512 on this machine")
	}
	saved, saved512, savedBF16 := useAsm, useAVX512, useBF16
	useAsm, useAVX512, useBF16 = im.asm, im.avx512, false
	defer func() { useAsm, useAVX512, useBF16 = saved, saved512, savedBF16 }()
	f()
}

// forEachImpl runs f as a subtest for each implementation (Go and, where
// the machine has them, the assembly ones).
func forEachImpl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) { withKernel(t, im, func() { f(t) }) })
	}
}

// randVec returns n values in [-1, 1), offset elements into a larger
// allocation so the kernels also see vectors that are not 32-byte aligned,
// with sentinel values on both sides.
func randVec(rng *rand.Rand, n, offset int) []float32 {
	buf := make([]float32, n+offset+8)
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	v := buf[offset : offset+n : offset+n]
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// refDot is the float64 dot product and the sum of |a_i b_i|, which bounds
// the rounding error any float32 summation order can make.
func refDot(a, b []float32) (dot, mag float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		mag += math.Abs(p)
	}
	return dot, mag
}

// near reports whether got is within float32 rounding of want: relative
// 1e-5 of the magnitude of the terms summed.
func near(got float32, want, mag float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*mag+1e-30
}

var sizes = []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 384, 385, 1536}

func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range sizes {
		for _, off := range []int{0, 1, 3} {
			a, b := randVec(rng, n, off), randVec(rng, n+2, 5-off)
			want, mag := refDot(a, b[:n])
			got := map[string]float32{}
			for _, im := range impls {
				if im.asm && !hasAsm {
					continue
				}
				withImpl(t, im.asm, func() { got[im.name] = Dot(a, b) })
				if g, ok := got[im.name]; ok && !near(g, want, mag) {
					t.Errorf("%s: Dot n=%d off=%d = %v, want %v", im.name, n, off, g, want)
				}
			}
			if len(got) == 2 && !near(got["avx2"], float64(got["go"]), mag) {
				t.Errorf("Dot n=%d off=%d: avx2 %v, go %v", n, off, got["avx2"], got["go"])
			}
		}
	}
}

func TestDotShortB(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("Dot with len(b) < len(a) did not panic")
			}
		}()
		Dot(make([]float32, 9), make([]float32, 8))
	})
}

// checkBatch verifies out against q·row for every row and that out's
// sentinel tail was not written.
func checkBatch(t *testing.T, name string, out, q, vecs []float32, d int) {
	t.Helper()
	for i := range out {
		want, mag := refDot(q[:d], vecs[i*d:(i+1)*d])
		if !near(out[i], want, mag) {
			t.Errorf("%s: row %d of %d (d=%d) = %v, want %v", name, i, len(out), d, out[i], want)
			return
		}
	}
	if tail := out[len(out):cap(out)]; len(tail) > 0 && !math.IsNaN(float64(tail[0])) {
		t.Errorf("%s: wrote past len(out) (rows=%d d=%d)", name, len(out), d)
	}
}

func TestDotBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	forEachImpl(t, func(t *testing.T) {
		for _, d := range sizes {
			for _, rows := range []int{0, 1, 3, 4, 5, 7, 8, 9, 17} {
				q := randVec(rng, d, rows%3)
				vecs := randVec(rng, rows*d, 1)
				out := nanSlice(rows)
				DotBatch(out, q, vecs, d)
				checkBatch(t, fmt.Sprintf("DotBatch d=%d rows=%d", d, rows), out, q, vecs, d)
			}
		}
	})
}

func TestDotBatchParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forEachImpl(t, func(t *testing.T) {
		for _, tc := range []struct{ rows, d int }{
			{parallelRows + 37, 33},
			{3 * parallelRows, 384},
			{100, 384}, // below the threshold: serial
		} {
			q := randVec(rng, tc.d, 1)
			vecs := randVec(rng, tc.rows*tc.d, 0)
			out := make([]float32, tc.rows, tc.rows+1)
			out[:tc.rows+1][tc.rows] = float32(math.NaN())
			DotBatchParallel(out, q, vecs, tc.d)
			checkBatch(t, fmt.Sprintf("DotBatchParallel rows=%d d=%d", tc.rows, tc.d), out, q, vecs, tc.d)
		}
	})
}

// checkMatMul compares c[i*ldc+j] with a_i·b_j and checks that the padding
// of each c row (columns n..ldc) and everything after the last row is intact.
func checkMatMul(t *testing.T, name string, c []float32, ldc int, a, b []float32, m, n, k int) {
	t.Helper()
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n {
				if !math.IsNaN(float64(got)) {
					t.Fatalf("%s (m=%d n=%d k=%d): wrote padding c[%d][%d]", name, m, n, k, i, j)
				}
				continue
			}
			want, mag := refDot(a[i*k:(i+1)*k], b[j*k:(j+1)*k])
			if !near(got, want, mag) {
				t.Fatalf("%s (m=%d n=%d k=%d): c[%d][%d] = %v, want %v", name, m, n, k, i, j, got, want)
			}
		}
	}
	for _, v := range c[m*ldc : cap(c)] {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("%s (m=%d n=%d k=%d): wrote past the end of c", name, m, n, k)
		}
	}
}

// nanSlice returns n NaNs followed by 4 more in the capacity.
func nanSlice(n int) []float32 {
	s := make([]float32, n+4)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	return s[:n]
}

type shape struct{ m, n, k int }

var matShapes = []shape{
	{0, 5, 5}, {5, 0, 5}, {1, 7, 0}, {4, 5, 0},
	{1, 1, 1}, {1, 1, 8}, {3, 4, 8}, {3, 4, 7}, {2, 3, 5}, {4, 5, 7},
	{6, 8, 16}, {7, 9, 17}, {5, 13, 33}, {9, 16, 15}, {17, 15, 384},
	{3, 4, 1536}, {10, 9, 385},
	{7, 700, 384},  // several column blocks of B; few rows: split by column
	{64, 384, 384}, // parallel, split by row
	{4, 90, 1536},  // two column blocks at k=1536, plus leftover row and columns
}

func TestMatMulT(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	forEachImpl(t, func(t *testing.T) {
		for _, s := range matShapes {
			a := randVec(rng, s.m*s.k, 1)
			b := randVec(rng, s.n*s.k, 3)
			for _, f := range []struct {
				name string
				fn   func(c, a, b []float32, m, n, k int)
			}{{"MatMulT", MatMulT}, {"MatMulTParallel", MatMulTParallel}, {"MatMulTSerial", MatMulTSerial}} {
				c := nanSlice(s.m * s.n)
				f.fn(c, a, b, s.m, s.n, s.k)
				checkMatMul(t, f.name, c, s.n, a, b, s.m, s.n, s.k)
			}
		}
	})
}

// TestMatMulTStride covers the column-block form the parallel split uses:
// c rows longer than n must keep their other columns.
func TestMatMulTStride(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	forEachImpl(t, func(t *testing.T) {
		for _, s := range matShapes {
			if s.m == 0 {
				continue
			}
			ldc := s.n + 5
			a := randVec(rng, s.m*s.k, 0)
			b := randVec(rng, s.n*s.k, 0)
			c := nanSlice(s.m * ldc)
			matMulT(c, ldc, a, b, s.m, s.n, s.k)
			checkMatMul(t, "matMulT", c, ldc, a, b, s.m, s.n, s.k)
		}
	})
}

// TestRandomShapes compares the two paths directly on many small random
// shapes, where the tile and tail bookkeeping is most likely to slip.
func TestRandomShapes(t *testing.T) {
	if !hasAsm {
		t.Skip("no AVX2+FMA assembly on this machine")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 300; iter++ {
		m, n, k := 1+rng.IntN(14), 1+rng.IntN(30), rng.IntN(80)
		a := randVec(rng, m*k, rng.IntN(8))
		b := randVec(rng, n*k, rng.IntN(8))
		c := map[bool][]float32{}
		batch := map[bool][]float32{}
		for _, asm := range []bool{false, true} {
			withImpl(t, asm, func() {
				c[asm] = make([]float32, m*n)
				MatMulT(c[asm], a, b, m, n, k)
				batch[asm] = make([]float32, n)
				DotBatch(batch[asm], a[:k], b, k)
			})
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				_, mag := refDot(a[i*k:(i+1)*k], b[j*k:(j+1)*k])
				if !near(c[true][i*n+j], float64(c[false][i*n+j]), mag) {
					t.Fatalf("m=%d n=%d k=%d c[%d][%d]: avx2 %v, go %v", m, n, k, i, j, c[true][i*n+j], c[false][i*n+j])
				}
			}
		}
		for j := 0; j < n; j++ {
			_, mag := refDot(a[:k], b[j*k:(j+1)*k])
			if !near(batch[true][j], float64(batch[false][j]), mag) {
				t.Fatalf("DotBatch rows=%d d=%d row %d: avx2 %v, go %v", n, k, j, batch[true][j], batch[false][j])
			}
		}
	}
}

func TestImpl(t *testing.T) {
	for _, im := range impls {
		if (im.asm && !hasAsm) || (im.avx512 && !hasAVX512) {
			continue
		}
		withKernel(t, im, func() {
			want := map[string]string{"go": "go", "avx2": "avx2+fma", "avx512": "avx512"}[im.name]
			if got := Impl(); got != want {
				t.Errorf("Impl() on the %s path = %q, want %q", im.name, got, want)
			}
		})
	}
	if hasBF16 {
		withBF16(t, true, func() {
			if got := Impl(); got != "avx512+bf16" {
				t.Errorf("Impl() with bfloat16 = %q, want avx512+bf16", got)
			}
		})
	}
}
