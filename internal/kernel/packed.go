package kernel

// The AVX2 and AVX-512 kernels are generated (the files are committed, so
// a build needs no Python):
//
//go:generate python3 ../../scripts/kernelgen/gemm.py
//go:generate python3 ../../scripts/kernelgen/act.py

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Packed holds a weight matrix B [n×k] (a PyTorch Linear weight, [out, in])
// and its bias, laid out for the matrix-multiply micro-kernel chosen when it
// was packed: column panels of nr outputs, each stored k-major ([k][nr]), so
// the kernel streams one panel with unit stride while it keeps an mr×nr tile
// of c in registers (outer products: one load of B serves mr rows, one
// broadcast of A serves nr columns, and no horizontal sums). Packing costs
// no memory beyond padding n to a multiple of nr; the model packs its
// weights once at load.
//
// When every weight is exactly a half-precision number (as the fp16 model's
// are) and the CPU converts halves in hardware, the panels are stored as
// halves: the same products to the bit, with half the memory and half the
// traffic — which is what bounds a multiply by a few rows, such as one short
// sentence.
type Packed struct {
	n, k   int
	g      *gemmKernel
	data   []float32   // ceil(n/nr) panels of k·nr floats, or nil
	data16 []uint16    // the same as halves, or nil
	bf     *bf16Kernel // set for a bfloat16 matrix (PackBF16), g unused
	dataBF []uint16    // its panels: [kp][nr][2] bfloat16 each
	bias   []float32   // ceil(n/nr)·nr floats, zero past n (and where no bias)
}

// gemmKernel is one micro-kernel: it sets the mr×nr tile of c to
// bias + a·b for mr rows of A (row-major, lda apart; all mr readable) and a
// packed B panel (b: [k][nr]), storing only the first rows rows of the tile.
type gemmKernel struct {
	name   string
	mr, nr int
	tile   func(c []float32, ldc int, a []float32, lda int, b, bias []float32, k, rows int)
	// tile16 is tile for a panel of halves; nil where there is none.
	tile16 func(c []float32, ldc int, a []float32, lda int, b []uint16, bias []float32, k, rows int)
}

// The portable micro-kernel's tile; any size works, these keep its
// accumulators in a small array.
var gemmGoKernel = &gemmKernel{name: "go", mr: 4, nr: 16, tile: gemmTileGo}

// currentGemm is the micro-kernel Pack uses: the widest the CPU has, unless
// HIVEMEM_KERNEL narrows the choice (tests flip useAsm and useAVX512).
func currentGemm() *gemmKernel {
	switch {
	case !useAsm:
		return gemmGoKernel
	case useAVX512:
		return gemmAVX512Kernel
	default:
		return gemmAVX2Kernel
	}
}

// Pack lays out b [n×k] and bias (length n, or nil for none) for
// MatMulPacked. It copies: b and bias may be reused afterwards.
func Pack(b, bias []float32, n, k int) (*Packed, error) {
	if n < 0 || k < 0 || len(b) < n*k || (bias != nil && len(bias) < n) {
		return nil, fmt.Errorf("kernel: pack %d×%d: weights have %d values, bias %d", n, k, len(b), len(bias))
	}
	g := currentGemm()
	panels := (n + g.nr - 1) / g.nr
	p := &Packed{n: n, k: k, g: g, bias: make([]float32, panels*g.nr)}
	b = b[:n*k]
	if g.tile16 != nil {
		p.data16 = make([]uint16, panels*k*g.nr)
		for j := 0; j < n && p.data16 != nil; j++ {
			panel, jj := p.data16[(j/g.nr)*k*g.nr:], j%g.nr
			for i, v := range b[j*k : (j+1)*k] {
				h, ok := toHalf(v)
				if !ok {
					p.data16 = nil // not all halves: keep float32
					break
				}
				panel[i*g.nr+jj] = h
			}
		}
	}
	if p.data16 == nil {
		p.data = make([]float32, panels*k*g.nr)
		for j := 0; j < n; j++ {
			panel, jj := p.data[(j/g.nr)*k*g.nr:], j%g.nr
			for i, v := range b[j*k : (j+1)*k] {
				panel[i*g.nr+jj] = v
			}
		}
	}
	if bias != nil {
		copy(p.bias, bias[:n])
	}
	return p, nil
}

// N and K give the shape of the packed matrix.
func (p *Packed) N() int { return p.n }
func (p *Packed) K() int { return p.k }

// Kernel names the micro-kernel the matrix was packed for, with "/f16"
// when the weights are stored as halves.
func (p *Packed) Kernel() string {
	if p.bf != nil {
		return "avx512/bf16"
	}
	if p.data16 != nil {
		return p.g.name + "/f16"
	}
	return p.g.name
}

// MatMulPacked sets c[m×n] = a[m×k]·Bᵀ + bias, B being p. Products of more
// than about a million multiply-adds are shared out over GOMAXPROCS
// goroutines; MatMulPackedSerial keeps to the calling one.
func MatMulPacked(c, a []float32, p *Packed, m int) {
	workers := runtime.GOMAXPROCS(0)
	if m*p.n*p.k < parallelMACs {
		workers = 1
	}
	matMulPacked(c, p.n, a, p.k, p, m, workers)
}

// MatMulPackedSerial is MatMulPacked on the calling goroutine.
func MatMulPackedSerial(c, a []float32, p *Packed, m int) { matMulPacked(c, p.n, a, p.k, p, m, 1) }

// MatMulPackedStrided is MatMulPackedSerial with rows of c ldc floats apart
// and rows of a lda apart (a head's slice of a wider activation, say).
func MatMulPackedStrided(c []float32, ldc int, a []float32, lda int, p *Packed, m int) {
	if m > 0 && (ldc < p.n || lda < p.k) {
		panic(fmt.Sprintf("kernel: strides %d, %d below the %d×%d matrix", ldc, lda, p.n, p.k))
	}
	matMulPacked(c, ldc, a, lda, p, m, 1)
}

// PackStrided lays out into p, reusing its memory, the n×k matrix whose
// element (j, i) is b[j·rowStride + i·colStride], as float32 and with no
// bias: a matrix computed on the fly, such as one head's keys (rows of the
// Q|K|V activations) or its values (their transpose). A zero Packed will do.
func (p *Packed) PackStrided(b []float32, n, k, rowStride, colStride int) {
	g := currentGemm()
	panels := (n + g.nr - 1) / g.nr
	p.n, p.k, p.g, p.data16, p.bf = n, k, g, nil, nil
	p.data = grow(p.data, panels*k*g.nr)
	p.bias = grow(p.bias, panels*g.nr)
	clear(p.bias)
	if n == 0 || k == 0 {
		return
	}
	_ = b[(n-1)*rowStride+(k-1)*colStride]
	nr := g.nr
	for q := range panels {
		panel := p.data[q*k*nr : (q+1)*k*nr]
		cols := min(nr, n-q*nr)
		for i := range k {
			dst := panel[i*nr : (i+1)*nr]
			src := (q*nr)*rowStride + i*colStride
			if rowStride == 1 {
				copy(dst[:cols], b[src:src+cols])
			} else {
				for jj := range cols {
					dst[jj] = b[src+jj*rowStride]
				}
			}
			clear(dst[cols:])
		}
	}
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

var tailPool sync.Pool // *[]float32: the padded last strip of A

// Cache blocking: a job covers a block of strips of A against a run of
// panels; within a job each panel of B is loaded once and swept down the
// strips, which stay in L2 (blockBytes of A: 252 rows of 384 floats, 60
// of 1536), so a batch reads the weights from memory once per block.
const blockBytes = 384 << 10

func matMulPacked(c []float32, ldc int, a []float32, lda int, p *Packed, m, workers int) {
	n, k, g := p.n, p.k, p.g
	if m <= 0 || n == 0 {
		return
	}
	c = c[:(m-1)*ldc+n]
	if k == 0 {
		for i := range m {
			copy(c[i*ldc:i*ldc+n], p.bias)
		}
		return
	}
	a = a[:(m-1)*lda+k]
	if p.bf != nil {
		matMulPackedBF16(c, ldc, a, lda, p, m, workers)
		return
	}
	mr, nr := g.mr, g.nr
	strips := (m + mr - 1) / mr
	panels := (n + nr - 1) / nr
	// The kernels read all mr rows of a strip: a last strip with fewer rows
	// is copied, zero-padded, so nothing past a is read.
	var tail []float32
	if r := m % mr; r != 0 {
		tp, _ := tailPool.Get().(*[]float32)
		if tp == nil {
			tp = new([]float32)
		}
		defer tailPool.Put(tp)
		*tp = grow(*tp, mr*k)
		tail = *tp
		clear(tail)
		for i := range r {
			copy(tail[i*k:(i+1)*k], a[(m-r+i)*lda:(m-r+i)*lda+k])
		}
	}

	rowBlocks, blockStrips, colBlocks, colPanels := blocking(strips, panels, 4*mr*k, workers)
	runJobs(rowBlocks*colBlocks, workers, func(job int) {
		rb, cb := job/colBlocks, job%colBlocks
		s0, s1 := rb*blockStrips, min((rb+1)*blockStrips, strips)
		p0, p1 := cb*colPanels, min((cb+1)*colPanels, panels)
		var edge [16 * 32]float32 // a tile of c whose panel is only partly inside n
		tile := func(c []float32, ldc int, a []float32, lda int, q int, rows int) {
			biasq := p.bias[q*nr : (q+1)*nr]
			if p.data16 != nil {
				g.tile16(c, ldc, a, lda, p.data16[q*k*nr:(q+1)*k*nr], biasq, k, rows)
				return
			}
			g.tile(c, ldc, a, lda, p.data[q*k*nr:(q+1)*k*nr], biasq, k, rows)
		}
		for q := p0; q < p1; q++ {
			j0 := q * nr
			for s := s0; s < s1; s++ {
				rows := min(mr, m-s*mr)
				as, ld := a[s*mr*lda:], lda
				if rows < mr {
					as, ld = tail, k
				}
				if j0+nr <= n {
					tile(c[s*mr*ldc+j0:], ldc, as, ld, q, rows)
					continue
				}
				tile(edge[:], nr, as, ld, q, rows)
				for i := range rows {
					r := (s*mr + i) * ldc
					copy(c[r+j0:r+n], edge[i*nr:i*nr+n-j0])
				}
			}
		}
	})
}

// blocking cuts the product into jobs: blocks of blockStrips strips of A
// (each stripBytes) by runs of colPanels panels of B.
func blocking(strips, panels, stripBytes, workers int) (rowBlocks, blockStrips, colBlocks, colPanels int) {
	blockStrips = max(1, blockBytes/stripBytes)
	rowBlocks = (strips + blockStrips - 1) / blockStrips
	// Share out columns too when rows alone give too few jobs for the
	// workers to balance.
	colPanels = panels
	for workers > 1 && rowBlocks*((panels+colPanels-1)/colPanels) < 3*workers && colPanels > 1 {
		colPanels = (colPanels + 1) / 2
	}
	colBlocks = (panels + colPanels - 1) / colPanels
	return rowBlocks, blockStrips, colBlocks, colPanels
}

// runJobs runs run(0..jobs-1) on up to workers goroutines (the caller's
// among them), handing jobs out as workers free up.
func runJobs(jobs, workers int, run func(job int)) {
	nw := min(workers, jobs)
	if nw <= 1 {
		for j := range jobs {
			run(j)
		}
		return
	}
	// Jobs are handed out as workers free up.
	var next atomic.Int64
	work := func() {
		for {
			j := int(next.Add(1)) - 1
			if j >= jobs {
				return
			}
			run(j)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < nw; w++ {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// gemmTileGo is the portable micro-kernel.
func gemmTileGo(c []float32, ldc int, a []float32, lda int, b, bias []float32, k, rows int) {
	const mr, nr = 4, 16
	var acc [mr][nr]float32
	for i := range acc {
		acc[i] = [nr]float32(bias[:nr])
	}
	b = b[:k*nr]
	for i := range rows {
		ri := &acc[i]
		ai := a[i*lda : i*lda+k]
		for p, av := range ai {
			bp := (*[nr]float32)(b[p*nr:])
			for j := range nr {
				ri[j] += av * bp[j]
			}
		}
	}
	for i := range rows {
		copy(c[i*ldc:i*ldc+nr], acc[i][:])
	}
}

// toHalf returns f as an IEEE binary16 and whether that is exact.
func toHalf(f float32) (uint16, bool) {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	a := math.Abs(float64(f))
	var h uint16
	switch {
	case a == 0:
	case a < 0x1p-14: // a subnormal half: a multiple of 2⁻²⁴
		h = uint16(a * 0x1p24)
	case a <= 65504:
		h = uint16((bits>>23&0xff-127+15)<<10 | (bits&0x7fffff)>>13)
	case math.IsInf(a, 0):
		h = 0x7c00
	default:
		return 0, false // NaN, or too large
	}
	h |= sign
	return h, fromHalf(h) == f
}

// fromHalf widens an IEEE binary16 to float32.
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0: // zero or subnormal
		v := float32(mant) * 0x1p-24
		return math.Float32frombits(math.Float32bits(v) | sign)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}
