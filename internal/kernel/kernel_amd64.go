//go:build amd64

package kernel

import "golang.org/x/sys/cpu"

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
