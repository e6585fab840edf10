package kernel

import (
	"fmt"
	"math"
	"os"
	"sync"
)

// useBF16 lets PackBF16 round weights to bfloat16 for the AVX512_BF16
// kernel. HIVEMEM_KERNEL=avx512 keeps AVX-512 in float32 (bit for bit the
// products of the half-precision weights), as avx2 and go do.
var useBF16 = useAVX512 && hasBF16 && os.Getenv("HIVEMEM_KERNEL") != "avx512"

// bf16On reports whether PackBF16 uses bfloat16 (tests flip the switches).
func bf16On() bool { return useAsm && useAVX512 && useBF16 }

// bf16Kernel is a micro-kernel for bfloat16 operands: it sets the mr×nr
// tile of c to bias + a·b for mr rows of A (bfloat16, row-major, lda
// apart, all mr readable) and a packed B panel of kp pairs of k ([kp][nr][2]),
// summing the products in float32, and stores only the first rows rows.
type bf16Kernel struct {
	mr, nr int
	tile   func(c []float32, ldc int, a []uint16, lda int, b []uint16, bias []float32, kp, rows int)
	// convert rounds a prefix of src to bfloat16 into dst and returns its
	// length.
	convert func(dst []uint16, src []float32) int
}

// PackBF16 is Pack for callers that accept bfloat16 precision: where the
// CPU multiplies bfloat16 pairs (AVX512_BF16: twice the multiply-adds of
// float32 per instruction), the weights are rounded to bfloat16 (8
// significant bits; a half-precision weight has 11) and so is A at each
// multiply, with the products summed in float32. Elsewhere it is Pack.
func PackBF16(b, bias []float32, n, k int) (*Packed, error) {
	if !bf16On() {
		return Pack(b, bias, n, k)
	}
	if n < 0 || k < 0 || len(b) < n*k || (bias != nil && len(bias) < n) {
		return nil, fmt.Errorf("kernel: pack %d×%d: weights have %d values, bias %d", n, k, len(b), len(bias))
	}
	g := gemmBF16Kernel
	nr := g.nr
	panels := (n + nr - 1) / nr
	kp := (k + 1) / 2
	p := &Packed{n: n, k: k, bf: g, bias: make([]float32, panels*nr), dataBF: make([]uint16, panels*kp*nr*2)}
	for j := range n {
		panel, jj := p.dataBF[(j/nr)*kp*nr*2:], j%nr
		for i, v := range b[j*k : (j+1)*k] {
			panel[(i/2)*nr*2+jj*2+i%2] = toBF16(v)
		}
	}
	if bias != nil {
		copy(p.bias, bias[:n])
	}
	return p, nil
}

// toBF16 rounds f to the nearest bfloat16 (ties to even), as the assembly
// does; NaNs are not expected.
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

var bf16Pool sync.Pool // *[]uint16: A rounded to bfloat16

// matMulPackedBF16 is matMulPacked for a bfloat16 matrix: A is rounded into
// a pooled buffer of whole strips (zero rows past m), then shared out like
// the float32 case.
func matMulPackedBF16(c []float32, ldc int, a []float32, lda int, p *Packed, m, workers int) {
	n, k, g := p.n, p.k, p.bf
	mr, nr := g.mr, g.nr
	kp := (k + 1) / 2
	ld := 2 * kp
	strips := (m + mr - 1) / mr
	bp, _ := bf16Pool.Get().(*[]uint16)
	if bp == nil {
		bp = new([]uint16)
	}
	defer bf16Pool.Put(bp)
	if cap(*bp) < strips*mr*ld {
		*bp = make([]uint16, strips*mr*ld)
	}
	ab := (*bp)[:strips*mr*ld]
	for i := range m {
		row, src := ab[i*ld:(i+1)*ld], a[i*lda:i*lda+k]
		done := g.convert(row, src)
		for j := done; j < k; j++ {
			row[j] = toBF16(src[j])
		}
		clear(row[k:])
	}
	clear(ab[m*ld:])
	panels := (n + nr - 1) / nr
	rowBlocks, blockStrips, colBlocks, colPanels := blocking(strips, panels, mr*ld*2, workers)
	runJobs(rowBlocks*colBlocks, workers, func(job int) {
		rb, cb := job/colBlocks, job%colBlocks
		s0, s1 := rb*blockStrips, min((rb+1)*blockStrips, strips)
		p0, p1 := cb*colPanels, min((cb+1)*colPanels, panels)
		var edge [12 * 32]float32
		for q := p0; q < p1; q++ {
			j0 := q * nr
			bq, biasq := p.dataBF[q*kp*nr*2:(q+1)*kp*nr*2], p.bias[q*nr:(q+1)*nr]
			for s := s0; s < s1; s++ {
				rows := min(mr, m-s*mr)
				as := ab[s*mr*ld:]
				if j0+nr <= n {
					g.tile(c[s*mr*ldc+j0:], ldc, as, ld, bq, biasq, kp, rows)
					continue
				}
				g.tile(edge[:], nr, as, ld, bq, biasq, kp, rows)
				for i := range rows {
					r := (s*mr + i) * ldc
					copy(c[r+j0:r+n], edge[i*nr:i*nr+n-j0])
				}
			}
		}
	})
}
