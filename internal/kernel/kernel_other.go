//go:build !amd64

package kernel

// There is no assembly for this architecture: the portable loops serve.
const hasAsm = false

const asmName = "go"

func dotAsm(a, b []float32) float32 { return dotGo(a, b) }

func dotBatchAsm(out, q, vecs []float32, d int) { dotBatchGo(out, q, vecs, d) }

func matMulTAsm(c []float32, ldc int, a, b []float32, m, n, k int) {
	matMulTGo(c, ldc, a, b, m, n, k)
}

const hasAVX512 = false

var (
	gemmAVX512Kernel = gemmGoKernel
	gemmAVX2Kernel   = gemmGoKernel
)

func expShiftAsm(x []float32, shift, scale float32) float32 { panic("kernel: no assembly") }

func geluAsm(x []float32) { panic("kernel: no assembly") }

const hasBF16 = false

var gemmBF16Kernel *bf16Kernel
