package minilm

import (
	"math"
	"testing"
)

// TestGeluMatchesErf holds the table GELU to the exact erf form: within a
// few float32 ulps everywhere, and exact at the edges and for NaN.
func TestGeluMatchesErf(t *testing.T) {
	// Error in units of the float32 spacing at the exact value, ignoring
	// absolute errors below 1e-8 (|x| near 6, where GELU is ~0 or ~x).
	var worst, worstAt float64
	for x := -10.0; x <= 10.0; x += 1.0 / 4096 {
		x32 := float64(float32(x))
		got := float64(geluOne(float32(x)))
		want := 0.5 * x32 * (1 + math.Erf(x32/math.Sqrt2))
		ulp := max(1e-12, math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))-float32(want))))
		if e := math.Abs(got-want) / ulp; e > worst && math.Abs(got-want) > 1e-8 {
			worst, worstAt = e, x
		}
	}
	if worst > 4 {
		t.Errorf("max error %.2f float32 ulps at x=%g, want <= 4", worst, worstAt)
	}
	t.Logf("max error %.2f float32 ulps at x=%g", worst, worstAt)
	tests := []struct {
		in, want float32
	}{
		{0, 0},
		{6, 6},
		{100, 100},
		{-6, 0},
		{-100, 0},
		{float32(math.Inf(1)), float32(math.Inf(1))},
		{float32(math.Inf(-1)), 0},
		{math.Nextafter32(6, 0), math.Nextafter32(6, 0)},
	}
	for _, tc := range tests {
		if got := geluOne(tc.in); math.Abs(float64(got-tc.want)) > 1e-6 {
			t.Errorf("gelu(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
	if got := geluOne(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Errorf("gelu(NaN) = %g", got)
	}
}

func BenchmarkGelu(b *testing.B) {
	xs := make([]float32, 1536)
	for i := range xs {
		xs[i] = float32(i%200)/20 - 5
	}
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			gelu(xs)
		}
	})
	b.Run("math.Erf", func(b *testing.B) {
		for b.Loop() {
			for i, x := range xs {
				xs[i] = float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
			}
		}
	})
}

func TestExpNonPos(t *testing.T) {
	var worst float64
	for z := -90.0; z <= 0; z += 1.0 / 1024 {
		got, want := expNonPos(z), math.Exp(z)
		if z <= -87 {
			if got != 0 {
				t.Fatalf("exp(%g) = %g, want 0 below float32 range", z, got)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 2e-8 {
		t.Errorf("max relative error %g, want <= 2e-8", worst)
	}
	if got := expNonPos(math.NaN()); got != 0 {
		t.Errorf("exp(NaN) = %g", got)
	}
}

func TestSoftmax(t *testing.T) {
	tests := []struct {
		in    []float32
		scale float32
		want  []float64
	}{
		{[]float32{0}, 1, []float64{1}},
		{[]float32{1, 1, 1, 1}, 0.5, []float64{0.25, 0.25, 0.25, 0.25}},
		{[]float32{0, 2}, 0.5, []float64{1 / (1 + math.E), math.E / (1 + math.E)}},
		{[]float32{-1000, 1000}, 1, []float64{0, 1}},
	}
	for _, tc := range tests {
		x := append([]float32(nil), tc.in...)
		softmax(x, tc.scale)
		for i := range x {
			if math.Abs(float64(x[i])-tc.want[i]) > 1e-6 {
				t.Errorf("softmax(%v, %g) = %v, want %v", tc.in, tc.scale, x, tc.want)
				break
			}
		}
	}
}
