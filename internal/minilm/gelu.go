package minilm

import (
	"math"

	"github.com/hivemem/hivemem/internal/kernel"
)

// BERT uses the exact GELU, x·Φ(x) with Φ the normal CDF (via erf), not the
// tanh approximation. Calling math.Erf per activation cost about a third of
// the whole forward pass, so Φ is instead interpolated from a table built
// from math.Erf at start-up: a cubic Hermite spline on knots 1/64 apart using
// the exact Φ and Φ' = φ at each knot. Its interpolation error is below 1e-10,
// far under float32 rounding, so the result is the exact GELU to float32
// precision (TestGeluMatchesErf holds it to that).
const (
	geluLim   = 6.0 // beyond ±6, Φ is 0 or 1 to within 1e-9
	geluSteps = 64  // knots per unit
	geluN     = 2 * geluLim * geluSteps
)

// geluPoly[i] holds the cubic c0 + c1·t + c2·t² + c3·t³ of Φ on knot
// interval i, t ∈ [0, 1).
var geluPoly = func() [geluN][4]float32 {
	var tab [geluN][4]float32
	h := 1.0 / geluSteps
	cdf := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	pdf := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	for i := range tab {
		x0 := -geluLim + float64(i)*h
		x1 := x0 + h
		p0, p1 := cdf(x0), cdf(x1)
		m0, m1 := pdf(x0)*h, pdf(x1)*h
		// Hermite form in the monomial basis.
		tab[i] = [4]float32{
			float32(p0),
			float32(m0),
			float32(-3*p0 - 2*m0 + 3*p1 - m1),
			float32(2*p0 + m0 - 2*p1 + m1),
		}
	}
	return tab
}()

// gelu applies GELU in place: the vectorised kernel takes what it can (to
// a relative 1.5e-6), the table the rest. The common case is written inline
// in the loop: a call per element costs as much as the arithmetic.
func gelu(xs []float32) {
	xs = xs[kernel.GELUPrefix(xs):]
	tab := &geluPoly
	for i, x := range xs {
		u := (x + geluLim) * geluSteps
		if !(u >= 0 && u < geluN) { // also false for NaN
			xs[i] = geluTail(x)
			continue
		}
		j := int(u)
		t := u - float32(j)
		c := &tab[j]
		xs[i] = x * (c[0] + t*(c[1]+t*(c[2]+t*c[3])))
	}
}

// geluTail handles |x| >= 6 (and NaN), where Φ is 0 or 1 in float32.
func geluTail(x float32) float32 {
	if x <= -geluLim {
		return 0
	}
	return x // x >= 6, +Inf or NaN
}

// geluOne is GELU of a single value.
func geluOne(x float32) float32 {
	v := [1]float32{x}
	gelu(v[:])
	return v[0]
}
