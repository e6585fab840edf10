// Package kernel holds the numeric inner loops shared by the embedder and the
// vector search: dot products and matrix multiply, with an AVX2+FMA assembly
// path on amd64 chosen at run time and a portable Go fallback.
//
// The assembly path is used when the CPU (and OS) support AVX2 and FMA, and
// the matrix multiply of packed weights uses AVX-512 where the CPU has it.
// Setting HIVEMEM_KERNEL=go in the environment forces the portable path, which
// is the quickest way to rule the assembly out when results look wrong;
// HIVEMEM_KERNEL=avx2 switches AVX-512 off, and HIVEMEM_KERNEL=avx512 keeps
// it to float32 (no bfloat16 products; see PackBF16).
package kernel

import (
	"math"
	"os"
	"runtime"
	"sync"
)

// useAsm selects the assembly kernels. It is fixed at start-up; tests flip it
// to run both paths on the same machine.
var useAsm = hasAsm && os.Getenv("HIVEMEM_KERNEL") != "go"

// useAVX512 selects the AVX-512 matrix-multiply kernel where the CPU has it;
// HIVEMEM_KERNEL=avx2 keeps to AVX2 (to measure or rule out that path).
var useAVX512 = useAsm && hasAVX512 && os.Getenv("HIVEMEM_KERNEL") != "avx2"

// Impl names the kernels in use ("avx512+bf16", "avx512", "avx2+fma" or
// "go") for status
// output, so a slow embedder on an old CPU can be explained.
func Impl() string {
	switch {
	case !useAsm:
		return "go"
	case bf16On():
		return "avx512+bf16"
	case useAVX512:
		return "avx512"
	}
	return asmName
}

// Thresholds below which splitting work across goroutines costs more than it
// saves (a goroutine hand-off is a few microseconds).
const (
	parallelRows = 4096    // DotBatchParallel: rows scored
	parallelMACs = 1 << 20 // MatMulT: multiply-adds
)

// Dot returns the inner product of a and b (len(b) >= len(a)).
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	if useAsm {
		return dotAsm(a, b)
	}
	return dotGo(a, b)
}

// DotBatch scores every row of vecs (rows of length d) against q:
// out[i] = q · vecs[i*d:(i+1)*d]. len(out) rows are scored, on the calling
// goroutine; see DotBatchParallel for large scans.
func DotBatch(out, q, vecs []float32, d int) {
	if len(out) == 0 {
		return
	}
	q = q[:d]
	vecs = vecs[:len(out)*d]
	if useAsm {
		dotBatchAsm(out, q, vecs, d)
		return
	}
	dotBatchGo(out, q, vecs, d)
}

// DotBatchParallel is DotBatch with the rows split across GOMAXPROCS
// goroutines when there are enough of them to pay for it: a 100k-row scan is
// memory-bound, and a second core roughly doubles the bandwidth one gets.
func DotBatchParallel(out, q, vecs []float32, d int) {
	rows := len(out)
	p := runtime.GOMAXPROCS(0)
	if rows <= parallelRows || p < 2 {
		DotBatch(out, q, vecs, d)
		return
	}
	q = q[:d]
	vecs = vecs[:rows*d]
	chunk := (rows + p - 1) / p
	chunk = (chunk + 3) &^ 3 // whole groups of 4 rows for the assembly kernel
	parallelFor(rows, chunk, func(lo, hi int) {
		DotBatch(out[lo:hi], q, vecs[lo*d:hi*d], d)
	})
}

// MatMulT computes c[m×n] = a[m×k] · bᵀ where b is [n×k] row-major, the
// layout of a PyTorch Linear weight ([out, in]). c is overwritten. Products
// larger than about a million multiply-adds are split across GOMAXPROCS
// goroutines, because the embedder spends nearly all its time here.
func MatMulT(c, a, b []float32, m, n, k int) {
	if m*n*k >= parallelMACs {
		MatMulTParallel(c, a, b, m, n, k)
		return
	}
	MatMulTSerial(c, a, b, m, n, k)
}

// MatMulTParallel is MatMulT split across GOMAXPROCS goroutines regardless of
// size (each goroutine gets a block of rows of c, or of columns when c has too
// few rows to share out).
func MatMulTParallel(c, a, b []float32, m, n, k int) {
	if m == 0 || n == 0 {
		return
	}
	c = c[:m*n]
	a = a[:m*k]
	b = b[:n*k]
	p := runtime.GOMAXPROCS(0)
	switch {
	case p < 2:
		MatMulTSerial(c, a, b, m, n, k)
	case m >= 3*p*2:
		// Row blocks in multiples of 3, the height of the assembly tile.
		chunk := ((m+p-1)/p + 2) / 3 * 3
		parallelFor(m, chunk, func(lo, hi int) {
			matMulT(c[lo*n:], n, a[lo*k:hi*k], b, hi-lo, n, k)
		})
	default:
		// Few rows (a short query): share out columns, multiples of 4.
		chunk := ((n+p-1)/p + 3) &^ 3
		parallelFor(n, chunk, func(lo, hi int) {
			matMulT(c[lo:], n, a, b[lo*k:hi*k], m, hi-lo, k)
		})
	}
}

// MatMulTSerial is MatMulT on the calling goroutine, for callers that
// already run one job per core (attention heads, say). Computing all of a
// head's scores in one call rather than row by row with DotBatch is about
// 1.7× faster, because the 3×4 tile reuses each load three or four times.
func MatMulTSerial(c, a, b []float32, m, n, k int) {
	if m == 0 || n == 0 {
		return
	}
	matMulT(c[:m*n], n, a[:m*k], b[:n*k], m, n, k)
}

// matMulT writes c[i*ldc+j] = a[i] · b[j]; the row stride lets a worker fill
// a column block of a larger c.
func matMulT(c []float32, ldc int, a, b []float32, m, n, k int) {
	if useAsm {
		matMulTAsm(c, ldc, a, b, m, n, k)
		return
	}
	matMulTGo(c, ldc, a, b, m, n, k)
}

// parallelFor runs f over [0,n) in chunks of the given size, one goroutine
// per chunk, the first on the caller's goroutine.
func parallelFor(n, chunk int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	f(0, min(chunk, n))
	wg.Wait()
}

func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotBatchGo(out, q, vecs []float32, d int) {
	for i := range out {
		out[i] = dotGo(q, vecs[i*d:(i+1)*d])
	}
}

func matMulTGo(c []float32, ldc int, a, b []float32, m, n, k int) {
	for i := 0; i < m; i++ {
		ar := a[i*k : (i+1)*k]
		cr := c[i*ldc : i*ldc+n]
		for j := range cr {
			cr[j] = dotGo(ar, b[j*k:(j+1)*k])
		}
	}
}

// Normalize scales v to unit length (accumulating in float64); a zero
// vector is left as it is. Embedders return unit vectors so that the
// palace's dot product is the cosine.
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
