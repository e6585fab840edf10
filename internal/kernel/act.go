package kernel

// The embedder's element-wise steps, vectorised where the CPU allows. Each
// handles the longest prefix of its input that is a whole number of vectors
// (8 floats) and returns its length, so that the caller finishes the few
// elements left, and everything without AVX2, with its portable code.

// ExpShiftPrefix sets x[i] = e^((x[i]-shift)·scale) over a prefix of x and
// returns the prefix's length and its sum. Arguments are meant to be <= 0
// (softmax after subtracting the maximum); below -80 the result is 1.8e-35
// rather than less (subnormal numbers would slow the arithmetic down many
// times). Relative error < 2e-7.
func ExpShiftPrefix(x []float32, shift, scale float32) (n int, sum float32) {
	n = len(x) &^ 7
	if !useAsm || n == 0 {
		return 0, 0
	}
	return n, expShiftAsm(x[:n], shift, scale)
}

// GELUPrefix applies the exact GELU, x·Φ(x), over a prefix of x and returns
// the prefix's length. Relative error < 1.5e-6 (Φ from an erfc with
// 1.2e-7 error and e^x in float32); below -8 the result is 0.
func GELUPrefix(x []float32) int {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	geluAsm(x[:n])
	return n
}
