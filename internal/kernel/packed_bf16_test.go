package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// withBF16 runs f with PackBF16's bfloat16 path switched on or off,
// skipping where the CPU has no AVX512_BF16.
func withBF16(tb testing.TB, on bool, f func()) {
	tb.Helper()
	if on && !hasBF16 {
		tb.Skip("no AVX512_BF16 on this machine")
	}
	saved := [3]bool{useAsm, useAVX512, useBF16}
	useAsm, useAVX512, useBF16 = on || useAsm, on || useAVX512, on
	defer func() { useAsm, useAVX512, useBF16 = saved[0], saved[1], saved[2] }()
	f()
}

func roundedBF16(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = math.Float32frombits(uint32(toBF16(x)) << 16)
	}
	return out
}

// TestMatMulPackedBF16 checks the bfloat16 kernel against products of the
// operands rounded to bfloat16 summed in float64 (the kernel sums in
// float32), serial and shared out, with rows and columns past whole tiles
// and k odd; nothing past c may be written.
func TestMatMulPackedBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	withBF16(t, true, func() {
		for _, s := range packedShapes {
			if s.k == 0 {
				continue
			}
			a := randVec(rng, s.m*s.k, 1)
			b := randVec(rng, s.n*s.k, 3)
			bias := randVec(rng, s.n, 2)
			p, err := PackBF16(b, bias, s.n, s.k)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kernel() != "avx512/bf16" || p.N() != s.n || p.K() != s.k {
				t.Fatalf("PackBF16 %d×%d gave %s %d×%d", s.n, s.k, p.Kernel(), p.N(), p.K())
			}
			for _, f := range []struct {
				name string
				fn   func(c, a []float32, p *Packed, m int)
			}{{"MatMulPacked", MatMulPacked}, {"MatMulPackedSerial", MatMulPackedSerial}, {"parallel", func(c, a []float32, p *Packed, m int) {
				matMulPacked(c, p.N(), a, p.K(), p, m, max(2, runtime.GOMAXPROCS(0)))
			}}} {
				c := nanSlice(s.m * s.n)
				f.fn(c, a, p, s.m)
				checkPacked(t, fmt.Sprintf("%s/bf16", f.name), c, roundedBF16(a[:s.m*s.k]), roundedBF16(b[:s.n*s.k]), bias, s.m, s.n, s.k)
			}
		}
	})
}

// TestPackBF16ExactWithoutBF16 checks that PackBF16 is Pack, to the bit,
// on every path that does not use bfloat16.
func TestPackBF16ExactWithoutBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	forEachImpl(t, func(t *testing.T) {
		withBF16(t, false, func() {
			const m, n, k = 13, 40, 31
			a, b, bias := randVec(rng, m*k, 0), randVec(rng, n*k, 0), randVec(rng, n, 0)
			p, err := PackBF16(b, bias, n, k)
			if err != nil {
				t.Fatal(err)
			}
			q, err := Pack(b, bias, n, k)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kernel() != q.Kernel() {
				t.Fatalf("PackBF16 chose %s, Pack %s", p.Kernel(), q.Kernel())
			}
			c1, c2 := make([]float32, m*n), make([]float32, m*n)
			MatMulPackedSerial(c1, a, p, m)
			MatMulPackedSerial(c2, a, q, m)
			for i := range c1 {
				if c1[i] != c2[i] {
					t.Fatalf("c[%d] = %v with PackBF16, %v with Pack", i, c1[i], c2[i])
				}
			}
		})
	})
}

// TestToBF16 checks the rounding, the assembly's against the portable one.
func TestToBF16(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0, 0},
		{math.Float32frombits(0x3f808000), 0x3f80}, // a tie, to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82}, // a tie, to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81}, // past the tie
		{math.Float32frombits(0x3f807fff), 0x3f80}, // below it
	} {
		if got := toBF16(tc.in); got != tc.want {
			t.Errorf("toBF16(%#x) = %#x, want %#x", math.Float32bits(tc.in), got, tc.want)
		}
	}
	withBF16(t, true, func() {
		rng := rand.New(rand.NewPCG(45, 46))
		src := randVec(rng, 100, 0)
		for i := range src {
			src[i] *= float32(math.Pow(10, float64(rng.IntN(20)-10)))
		}
		dst := make([]uint16, len(src))
		n := gemmBF16Kernel.convert(dst, src)
		if n != 96 {
			t.Fatalf("converted %d of 100, want 96", n)
		}
		for i := range n {
			if dst[i] != toBF16(src[i]) {
				t.Fatalf("assembly rounds %v to %#x, want %#x", src[i], dst[i], toBF16(src[i]))
			}
		}
	})
}
