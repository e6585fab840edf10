package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// checkPacked compares c[m×n] with bias_j + a_i·b_j, and checks that
// nothing past c was written.
func checkPacked(t *testing.T, name string, c, a, b, bias []float32, m, n, k int) {
	t.Helper()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			want, mag := refDot(a[i*k:(i+1)*k], b[j*k:(j+1)*k])
			if bias != nil {
				want += float64(bias[j])
				mag += math.Abs(float64(bias[j]))
			}
			if got := c[i*n+j]; !near(got, want, mag) {
				t.Fatalf("%s (m=%d n=%d k=%d): c[%d][%d] = %v, want %v", name, m, n, k, i, j, got, want)
			}
		}
	}
	for _, v := range c[m*n : cap(c)] {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("%s (m=%d n=%d k=%d): wrote past the end of c", name, m, n, k)
		}
	}
}

var packedShapes = append([]shape{
	{13, 33, 5},     // one row past a 12-row strip, one column past a panel
	{25, 64, 1},     // k of one
	{46, 384, 384},  // one sentence: Q/K/V-sized output
	{47, 1536, 384}, // FFN up, rows not a multiple of any strip
	{50, 384, 1536}, // FFN down
	{100, 40, 31},   // many strips, a partial panel
}, matShapes...)

// halfVec returns n values that are exact halves (multiples of 2⁻¹⁰ in
// [-1, 1]), as a half-precision model's weights are.
func halfVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.IntN(2049)-1024) / 1024
	}
	return v
}

func TestMatMulPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	forEachImpl(t, func(t *testing.T) {
		for _, s := range packedShapes {
			a := randVec(rng, s.m*s.k, 1)
			for _, b := range [][]float32{randVec(rng, s.n*s.k, 3), halfVec(rng, s.n*s.k)} {
				for _, bias := range [][]float32{nil, randVec(rng, s.n, 2)} {
					p, err := Pack(b, bias, s.n, s.k)
					if err != nil {
						t.Fatal(err)
					}
					if p.N() != s.n || p.K() != s.k {
						t.Fatalf("packed shape %d×%d, want %d×%d", p.N(), p.K(), s.n, s.k)
					}
					for _, f := range []struct {
						name string
						fn   func(c, a []float32, p *Packed, m int)
					}{{"MatMulPacked", MatMulPacked}, {"MatMulPackedSerial", MatMulPackedSerial}, {"parallel", func(c, a []float32, p *Packed, m int) {
						matMulPacked(c, p.N(), a, p.K(), p, m, max(2, runtime.GOMAXPROCS(0)))
					}}} {
						c := nanSlice(s.m * s.n)
						f.fn(c, a, p, s.m)
						checkPacked(t, fmt.Sprintf("%s/%s bias=%v", f.name, p.Kernel(), bias != nil), c, a, b, bias, s.m, s.n, s.k)
					}
				}
			}
		}
	})
}

// TestPackStoresHalvesOnlyWhenExact checks that weights which are all
// halves are stored as halves on the assembly paths (so the fp16 model's
// products are unchanged), and any other weights as float32.
func TestPackStoresHalvesOnlyWhenExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	forEachImpl(t, func(t *testing.T) {
		halves := halfVec(rng, 64*40)
		mixed := append([]float32(nil), halves...)
		mixed[len(mixed)-1] = 1.0 / 3
		for _, tc := range []struct {
			name string
			b    []float32
			f16  bool
		}{{"halves", halves, currentGemm().tile16 != nil}, {"one value not a half", mixed, false}} {
			p, err := Pack(tc.b, nil, 64, 40)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.HasSuffix(p.Kernel(), "/f16"); got != tc.f16 {
				t.Errorf("%s: packed as %s, want halves %v", tc.name, p.Kernel(), tc.f16)
			}
		}
	})
}

// TestHalfConversion holds toHalf and fromHalf to each other over every
// half, and toHalf to refusing what is not exactly a half.
func TestHalfConversion(t *testing.T) {
	for h := range 1 << 16 {
		f := fromHalf(uint16(h))
		if f != f {
			if _, ok := toHalf(f); ok {
				t.Fatalf("toHalf(NaN from %#04x) claims exact", h)
			}
			continue
		}
		got, ok := toHalf(f)
		if !ok || fromHalf(got) != f || (f == 0 && got != uint16(h)) {
			t.Fatalf("half %#04x → %g → %#04x (exact %v)", h, f, got, ok)
		}
	}
	for _, f := range []float32{1.0 / 3, 65520, 1e-8, 0x1p-25, 1 + 0x1p-11, float32(math.Inf(-1))} {
		_, ok := toHalf(f)
		want := math.IsInf(float64(f), 0)
		if ok != want {
			t.Errorf("toHalf(%g) exact = %v, want %v", f, ok, want)
		}
	}
	if fromHalf(0x3c00) != 1 || fromHalf(0xc000) != -2 || fromHalf(0x0001) != 0x1p-24 || fromHalf(0x7bff) != 65504 {
		t.Error("fromHalf gets a known value wrong")
	}
}

// TestMatMulPackedRandomShapes compares every path with the float64
// reference on many small shapes, where strip and panel edges are most
// likely to slip.
func TestMatMulPackedRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	forEachImpl(t, func(t *testing.T) {
		for range 200 {
			m, n, k := 1+rng.IntN(40), 1+rng.IntN(70), rng.IntN(50)
			a := randVec(rng, m*k, rng.IntN(8))
			b := randVec(rng, n*k, rng.IntN(8))
			bias := randVec(rng, n, 0)
			p, err := Pack(b, bias, n, k)
			if err != nil {
				t.Fatal(err)
			}
			c := nanSlice(m * n)
			matMulPacked(c, n, a, k, p, m, 1+rng.IntN(3))
			checkPacked(t, p.Kernel(), c, a, b, bias, m, n, k)
		}
	})
}

func TestPackRejectsShortInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		b, bias []float32
		n, k    int
	}{
		{"weights too short", make([]float32, 11), nil, 3, 4},
		{"bias too short", make([]float32, 12), make([]float32, 2), 3, 4},
		{"negative size", nil, nil, -1, 4},
	} {
		if _, err := Pack(tc.b, tc.bias, tc.n, tc.k); err == nil {
			t.Errorf("%s: Pack accepted it", tc.name)
		}
	}
}

// BenchmarkMatMulPacked times the embedder's shapes on packed weights that
// are halves, as the model's are: one 46-token sentence and a batch of 32
// (1472 tokens), for the output projection, fused Q/K/V, FFN up and FFN
// down; "-1thread" is one core.
func BenchmarkMatMulPacked(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, m := range []int{46, 1472} {
		for _, s := range []shape{{m, 384, 384}, {m, 1152, 384}, {m, 1536, 384}, {m, 384, 1536}} {
			x, w := randVec(rng, s.m*s.k, 0), halfVec(rng, s.n*s.k)
			c := make([]float32, s.m*s.n)
			for _, im := range impls {
				for _, serial := range []bool{false, true} {
					name := im.name
					f := MatMulPacked
					if serial {
						name += "-1thread"
						f = MatMulPackedSerial
					}
					b.Run(fmt.Sprintf("m=%d,k=%d,n=%d/%s", s.m, s.k, s.n, name), func(b *testing.B) {
						withKernel(b, im, func() {
							p, err := Pack(w, nil, s.n, s.k)
							if err != nil {
								b.Fatal(err)
							}
							cpu0 := cpuSeconds()
							for b.Loop() {
								f(c, x, p, s.m)
							}
							reportGFLOPs(b, 2*float64(s.m)*float64(s.n)*float64(s.k), cpu0)
						})
					})
				}
			}
			// The bfloat16 kernel, where the CPU has it.
			for _, serial := range []bool{false, true} {
				name, f := "avx512-bf16", MatMulPacked
				if serial {
					name, f = name+"-1thread", MatMulPackedSerial
				}
				b.Run(fmt.Sprintf("m=%d,k=%d,n=%d/%s", s.m, s.k, s.n, name), func(b *testing.B) {
					withBF16(b, true, func() {
						p, err := PackBF16(w, nil, s.n, s.k)
						if err != nil {
							b.Fatal(err)
						}
						cpu0 := cpuSeconds()
						for b.Loop() {
							f(c, x, p, s.m)
						}
						reportGFLOPs(b, 2*float64(s.m)*float64(s.n)*float64(s.k), cpu0)
					})
				})
			}
		}
	}
}

// TestPackStridedAndStridedMatMul multiplies a head-sized slice of wider
// rows by keys packed from rows and values packed from their transpose, as
// attention does, into a slice of wider output rows.
func TestPackStridedAndStridedMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	forEachImpl(t, func(t *testing.T) {
		var p Packed // reused across shapes, as attention reuses it
		for _, s := range []shape{{46, 46, 32}, {13, 40, 7}, {1, 1, 1}, {30, 5, 33}, {12, 64, 32}} {
			const wide = 100 // row length of the wider matrices
			a := randVec(rng, s.m*wide, 0)
			src := randVec(rng, max(s.n, s.k)*wide, 0)
			for _, transposed := range []bool{false, true} {
				// b[j][i] read from src as rows (j·wide + i) or columns (i·wide + j).
				rs, cs := wide, 1
				if transposed {
					rs, cs = 1, wide
				}
				p.PackStrided(src, s.n, s.k, rs, cs)
				b := make([]float32, s.n*s.k)
				for j := range s.n {
					for i := range s.k {
						b[j*s.k+i] = src[j*rs+i*cs]
					}
				}
				ac := make([]float32, s.m*s.k)
				for i := range s.m {
					copy(ac[i*s.k:(i+1)*s.k], a[i*wide:])
				}
				c := nanSlice(s.m * wide)
				MatMulPackedStrided(c, wide, a, wide, &p, s.m)
				for i := range s.m {
					for j := range wide {
						got := c[i*wide+j]
						if j >= s.n {
							if got == got {
								t.Fatalf("%v transposed=%v: wrote c[%d][%d] outside the matrix", s, transposed, i, j)
							}
							continue
						}
						want, mag := refDot(ac[i*s.k:(i+1)*s.k], b[j*s.k:(j+1)*s.k])
						if !near(got, want, mag) {
							t.Fatalf("%v transposed=%v: c[%d][%d] = %v, want %v", s, transposed, i, j, got, want)
						}
					}
				}
			}
		}
	})
}

// reportGFLOPs reports the speed of flops floating-point operations per
// iteration in GFLOP/s of wall clock and, since cpu0 (cpuSeconds at the
// start), per CPU-second of the process: on a machine other work is using
// the second is the steadier figure for a one-thread run.
func reportGFLOPs(b *testing.B, flops float64, cpu0 float64) {
	total := flops * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cpuSeconds() - cpu0; cpu0 >= 0 && cpu > 0 {
		b.ReportMetric(total/cpu/1e9, "GFLOP/cpu-s")
	}
}
