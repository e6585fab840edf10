//go:build amd64

package kernel

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// hasAsm reports whether the AVX2+FMA kernels in kernel_amd64.s can run here
// (x/sys/cpu also checks that the OS saves the YMM registers).
var hasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

const asmName = "avx2+fma"

// l2Budget is how much of B (bytes) the matrix multiply keeps hot while it
// sweeps the rows of A. Measured on a 2 MiB-L2 Xeon, anything from 256 KiB
// to 768 KiB is equally fast and 1.5 MiB is 15% slower; 512 KiB leaves room
// on CPUs with 1 MiB of L2.
const l2Budget = 512 << 10

// dotAVX2 returns Σ a[i]*b[i] for i < n.
//
//go:noescape
func dotAVX2(a, b *float32, n int) float32

// dotBatch4AVX2 sets out[r] = q · v[r*d:(r+1)*d] for r < rows; rows must be a
// multiple of 4 (four rows share each load of q).
//
//go:noescape
func dotBatch4AVX2(out, q, v *float32, d, rows int)

// gemm3x4AVX2 fills a 3×(4·tiles) block of c (row stride ldc) with the dot
// products of 3 rows of a and 4·tiles rows of b, all rows of length k.
//
//go:noescape
func gemm3x4AVX2(c *float32, ldc int, a, b *float32, k, tiles int)

func dotAsm(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	return dotAVX2(&a[0], &b[0], len(a))
}

func dotBatchAsm(out, q, vecs []float32, d int) {
	if d == 0 {
		clear(out)
		return
	}
	_ = q[d-1]
	_ = vecs[len(out)*d-1]
	r4 := len(out) &^ 3
	if r4 > 0 {
		dotBatch4AVX2(&out[0], &q[0], &vecs[0], d, r4)
	}
	for i := r4; i < len(out); i++ {
		out[i] = dotAVX2(&q[0], &vecs[i*d], d)
	}
}

// matMulTAsm tiles c into 3×4 blocks computed by gemm3x4AVX2, with B cut into
// column blocks that fit in L2 so each is read from memory once per block
// rather than once per 3 rows of A. Leftover rows use the 1×4 DotBatch
// kernel, leftover columns plain dot products.
func matMulTAsm(c []float32, ldc int, a, b []float32, m, n, k int) {
	if m == 0 || n == 0 {
		return
	}
	_ = c[(m-1)*ldc+n-1]
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	_ = a[m*k-1]
	_ = b[n*k-1]
	m3 := m - m%3
	n4 := n &^ 3
	nc := max(4, (l2Budget/(4*k))&^3)
	for j0 := 0; j0 < n4; j0 += nc {
		j1 := min(j0+nc, n4)
		for i := 0; i < m3; i += 3 {
			gemm3x4AVX2(&c[i*ldc+j0], ldc, &a[i*k], &b[j0*k], k, (j1-j0)/4)
		}
		for i := m3; i < m; i++ {
			dotBatch4AVX2(&c[i*ldc+j0], &a[i*k], &b[j0*k], k, j1-j0)
		}
	}
	for j := n4; j < n; j++ {
		for i := 0; i < m; i++ {
			c[i*ldc+j] = dotAVX2(&a[i*k], &b[j*k], k)
		}
	}
}

// hasAVX512 reports whether the AVX-512 matrix-multiply kernel can run here
// (AVX-512F with the OS saving the ZMM state, which x/sys/cpu checks).
var hasAVX512 = hasAsm && cpu.X86.HasAVX512F

// gemm12x32AVX512 and gemm6x16AVX2 are the micro-kernels: see gemmKernel.
// a is row-major with rows lda floats apart (all mr rows readable), b a
// packed panel [k][nr], bias nr floats; rows (1..mr) rows of the tile are
// stored, ldc floats apart.
//
//go:noescape
func gemm12x32AVX512(c *float32, ldc int, a *float32, lda int, b, bias *float32, k, rows int)

//go:noescape
func gemm6x16AVX2(c *float32, ldc int, a *float32, lda int, b, bias *float32, k, rows int)

// The same for a B panel of halves (needs F16C's VCVTPH2PS).
//
//go:noescape
func gemm12x32F16AVX512(c *float32, ldc int, a *float32, lda int, b *uint16, bias *float32, k, rows int)

//go:noescape
func gemm6x16F16AVX2(c *float32, ldc int, a *float32, lda int, b *uint16, bias *float32, k, rows int)

// gemm12x32BF16AVX512 is the micro-kernel for bfloat16 operands: a is
// bfloat16 row-major (lda halves apart), b a panel of kp pairs of k.
//
//go:noescape
func gemm12x32BF16AVX512(c *float32, ldc int, a *uint16, lda int, b *uint16, bias *float32, kp, rows int)

// toBF16AVX512 rounds n float32s (a multiple of 16) to bfloat16.
//
//go:noescape
func toBF16AVX512(dst *uint16, src *float32, n int)

// hasBF16 reports whether the CPU has AVX512_BF16's VDPBF16PS.
var hasBF16 = hasAVX512 && cpu.X86.HasAVX512BF16

var gemmBF16Kernel = &bf16Kernel{mr: 12, nr: 32,
	tile: func(c []float32, ldc int, a []uint16, lda int, b []uint16, bias []float32, kp, rows int) {
		if rows < 1 || rows > 12 || kp < 1 || len(c) < (rows-1)*ldc+32 || len(a) < 11*lda+2*kp || len(b) < 64*kp || len(bias) < 32 {
			panic(fmt.Sprintf("kernel: bf16 12×32 tile out of range (rows %d, kp %d, len c %d a %d b %d bias %d)", rows, kp, len(c), len(a), len(b), len(bias)))
		}
		gemm12x32BF16AVX512(&c[0], ldc, &a[0], lda, &b[0], &bias[0], kp, rows)
	},
	convert: func(dst []uint16, src []float32) int {
		n := len(src) &^ 15
		if n > 0 {
			_ = dst[n-1]
			toBF16AVX512(&dst[0], &src[0], n)
		}
		return n
	},
}

// hasF16C reports whether the CPU converts halves (every AVX2 CPU so far).
var hasF16C = cpu.X86.HasF16C

var gemmAVX512Kernel = &gemmKernel{name: "avx512", mr: 12, nr: 32,
	tile: func(c []float32, ldc int, a []float32, lda int, b, bias []float32, k, rows int) {
		checkTile(c, ldc, a, lda, len(b), bias, k, rows, 12, 32)
		gemm12x32AVX512(&c[0], ldc, &a[0], lda, &b[0], &bias[0], k, rows)
	},
	tile16: ifF16C(func(c []float32, ldc int, a []float32, lda int, b []uint16, bias []float32, k, rows int) {
		checkTile(c, ldc, a, lda, len(b), bias, k, rows, 12, 32)
		gemm12x32F16AVX512(&c[0], ldc, &a[0], lda, &b[0], &bias[0], k, rows)
	}),
}

var gemmAVX2Kernel = &gemmKernel{name: "avx2", mr: 6, nr: 16,
	tile: func(c []float32, ldc int, a []float32, lda int, b, bias []float32, k, rows int) {
		checkTile(c, ldc, a, lda, len(b), bias, k, rows, 6, 16)
		gemm6x16AVX2(&c[0], ldc, &a[0], lda, &b[0], &bias[0], k, rows)
	},
	tile16: ifF16C(func(c []float32, ldc int, a []float32, lda int, b []uint16, bias []float32, k, rows int) {
		checkTile(c, ldc, a, lda, len(b), bias, k, rows, 6, 16)
		gemm6x16F16AVX2(&c[0], ldc, &a[0], lda, &b[0], &bias[0], k, rows)
	}),
}

type tile16Func = func(c []float32, ldc int, a []float32, lda int, b []uint16, bias []float32, k, rows int)

func ifF16C(f tile16Func) tile16Func {
	if !hasF16C {
		return nil
	}
	return f
}

// checkTile panics, as a slice index would, if the assembly would reach
// outside its operands.
func checkTile(c []float32, ldc int, a []float32, lda, lenB int, bias []float32, k, rows, mr, nr int) {
	if rows < 1 || rows > mr || k < 1 || len(c) < (rows-1)*ldc+nr || len(a) < (mr-1)*lda+k || lenB < nr*k || len(bias) < nr {
		panic(fmt.Sprintf("kernel: %d×%d tile out of range (rows %d, k %d, len c %d a %d b %d bias %d)", mr, nr, rows, k, len(c), len(a), lenB, len(bias)))
	}
}

//go:noescape
func expShiftAVX2(x *float32, n int, shift, scale float32) float32

//go:noescape
func geluAVX2(x *float32, n int)

func expShiftAsm(x []float32, shift, scale float32) float32 {
	return expShiftAVX2(&x[0], len(x), shift, scale)
}

//go:noescape
func geluAVX512(x *float32, n int)

// geluAsm applies GELU to x (a multiple of 8 long), 16 lanes at a time
// where AVX-512 is in use.
func geluAsm(x []float32) {
	if useAVX512 {
		if n := len(x) &^ 15; n > 0 {
			geluAVX512(&x[0], n)
			x = x[n:]
		}
		if len(x) == 0 {
			return
		}
	}
	geluAVX2(&x[0], len(x))
}
