// Package kernel holds the numeric inner loops shared by the embedder and the
// vector search: dot products and matrix multiply, with an AVX2+FMA assembly
// path on amd64 chosen at run time and a portable Go fallback.
package kernel

// Dot returns the inner product of a and b (len(b) >= len(a)).
func Dot(a, b []float32) float32 { return dotGo(a, b) }

// DotBatch scores every row of vecs (rows of length d) against q:
// out[i] = q · vecs[i*d:(i+1)*d]. len(out) rows are scored.
func DotBatch(out, q, vecs []float32, d int) {
	for i := range out {
		out[i] = dotGo(q, vecs[i*d:(i+1)*d])
	}
}

// MatMulT computes c[m×n] = a[m×k] · bᵀ where b is [n×k] row-major, the
// layout of a PyTorch Linear weight ([out, in]). c is overwritten.
func MatMulT(c, a, b []float32, m, n, k int) { matMulTGo(c, a, b, m, n, k) }

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

func matMulTGo(c, a, b []float32, m, n, k int) {
	for i := 0; i < m; i++ {
		ar := a[i*k : (i+1)*k]
		cr := c[i*n : (i+1)*n]
		for j := 0; j < n; j++ {
			cr[j] = dotGo(ar, b[j*k:(j+1)*k])
		}
	}
}
