package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Each benchmark runs the "go" and "avx2" paths side by side so one run
// gives the speed-up on the machine at hand.

var dotSink float32

func BenchmarkDot384(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randVec(rng, 384, 0), randVec(rng, 384, 0)
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			withKernel(b, im, func() {
				for b.Loop() {
					dotSink += Dot(x, y)
				}
			})
		})
	}
}

// benchBatch scores 100 000 rows of 384 floats (154 MB, far beyond cache):
// the vector search over a large palace.
func benchBatch(b *testing.B, f func(out, q, vecs []float32, d int)) {
	const rows, d = 100_000, 384
	rng := rand.New(rand.NewPCG(2, 2))
	q, vecs := randVec(rng, d, 0), randVec(rng, rows*d, 0)
	out := make([]float32, rows)
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			withKernel(b, im, func() {
				b.SetBytes(rows * d * 4)
				for b.Loop() {
					f(out, q, vecs, d)
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/op")
			})
		})
	}
}

func BenchmarkDotBatch100k(b *testing.B)         { benchBatch(b, DotBatch) }
func BenchmarkDotBatchParallel100k(b *testing.B) { benchBatch(b, DotBatchParallel) }

// BenchmarkMatMulT times the embedder's shapes (256 tokens of MiniLM: the
// output projection, fused Q/K/V, FFN up and FFN down), through MatMulT as the
// embedder calls it and, for the per-core figure, single-threaded.
func BenchmarkMatMulT(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, s := range []shape{{256, 384, 384}, {256, 1152, 384}, {256, 1536, 384}, {256, 384, 1536}} {
		x, w := randVec(rng, s.m*s.k, 0), randVec(rng, s.n*s.k, 0)
		c := make([]float32, s.m*s.n)
		for _, im := range impls {
			for _, serial := range []bool{false, true} {
				name := im.name
				f := MatMulT
				if serial {
					name += "-1thread"
					f = MatMulTSerial
				}
				b.Run(fmt.Sprintf("m=%d,k=%d,n=%d/%s", s.m, s.k, s.n, name), func(b *testing.B) {
					withKernel(b, im, func() {
						for b.Loop() {
							f(c, x, w, s.m, s.n, s.k)
						}
						flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
						b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				})
			}
		}
	}
}
