package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpShiftPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	forEachImpl(t, func(t *testing.T) {
		for _, n := range []int{0, 5, 8, 13, 46, 256} {
			x := make([]float32, n)
			for i := range x {
				x[i] = rng.Float32()*200 - 190 // down to where e^x underflows
			}
			orig := append([]float32(nil), x...)
			const shift, scale = 3, 0.5
			done, sum := ExpShiftPrefix(x, shift, scale)
			if !useAsm && done != 0 || useAsm && done != n&^7 {
				t.Fatalf("n=%d: did %d", n, done)
			}
			var want float64
			for i := range done {
				e := math.Exp(float64((orig[i] - shift) * scale))
				want += e
				if got := float64(x[i]); math.Abs(got-e) > 2e-7*e+2e-35 {
					t.Fatalf("e^%g = %g, want %g", (orig[i]-shift)*scale, got, e)
				}
			}
			if math.Abs(float64(sum)-want) > 1e-6*want {
				t.Fatalf("n=%d: sum %g, want %g", n, sum, want)
			}
			for i := done; i < n; i++ {
				if x[i] != orig[i] {
					t.Fatalf("n=%d: element %d past the prefix changed", n, i)
				}
			}
		}
	})
}

func TestGELUPrefix(t *testing.T) {
	exact := func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	forEachImpl(t, func(t *testing.T) {
		var x []float32
		for v := -12.0; v <= 12; v += 1.0 / 256 {
			x = append(x, float32(v))
		}
		inf, nan := float32(math.Inf(1)), float32(math.NaN())
		x = append(x, inf, -inf, nan, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 3)
		orig := append([]float32(nil), x...)
		done := GELUPrefix(x)
		if !useAsm && done != 0 || useAsm && done != len(x)&^7 {
			t.Fatalf("did %d of %d", done, len(x))
		}
		for i := range done {
			in, got := float64(orig[i]), float64(x[i])
			switch {
			case math.IsNaN(in):
				if !math.IsNaN(got) {
					t.Errorf("gelu(NaN) = %g", got)
				}
			case in <= -8:
				if got != 0 {
					t.Errorf("gelu(%g) = %g, want 0", in, got)
				}
			case math.IsInf(in, 1):
				if !math.IsInf(got, 1) {
					t.Errorf("gelu(+Inf) = %g", got)
				}
			default:
				want := exact(in)
				if math.Abs(got-want) > 1.5e-6*math.Abs(want)+1e-9*math.Abs(in) {
					t.Errorf("gelu(%g) = %.9g, want %.9g", in, got, want)
				}
			}
		}
	})
}

func BenchmarkGELU1536(b *testing.B) {
	x := make([]float32, 1536)
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			withKernel(b, im, func() {
				for b.Loop() {
					for i := range x {
						x[i] = float32(i%400)/10 - 20 // -20..20: tails too
					}
					GELUPrefix(x)
				}
			})
		})
	}
}
