# Generates internal/kernel/gemm_amd64.s: python3 scripts/kernelgen/gemm.py (go generate ./internal/kernel runs it).
import os
PF=2048
out=[]
w=out.append
w("""//go:build amd64

#include "textflag.h"

// Matrix-multiply micro-kernels for packed weights (see packed.go). Each
// keeps an mr×nr tile of c in registers, starting from the bias, and per
// step of k loads one row of the packed B panel ([k][nr]) and broadcasts one
// value from each of the mr rows of A (row-major, lda bytes apart): mr·nr/lanes
// FMAs for nr/lanes loads and mr broadcasts, and no horizontal sums. The rows
// of A are reached from four base pointers (rows 0, 3, 6, 9) plus 0, 1 or 2
// strides. Only the first `rows` rows of the tile are stored; A must have
// all mr rows readable (packed.go pads the last strip).
""")
def kernel(name, mr, nr, lanes, reg, label, half=False):
    esz = 2 if half else 4
    load = "VCVTPH2PS" if half else "VMOVUPS  "
    nv = nr//lanes          # vectors per row
    nacc = mr*nv
    breg = [f"{reg}{nacc+i}" for i in range(nv)]
    bc = [f"{reg}{nacc+nv+i}" for i in range(2)] if reg=="Y" else [f"{reg}{nacc+nv+i}" for i in range(6)]
    bases = ["SI","R9","R10","R12"][:mr//3]
    mac = name.upper()+"_STEP"
    w(f"// {mac}(off): one step of k for the {mr}×{nr} tile, A at byte offset off.")
    w(f"#define {mac}(off) \\")
    lines=[]
    # One line of B ahead per step: the first strip to sweep a panel reads
    # it from L3 or memory.
    lines.append(f"\tPREFETCHT0   {PF}(DI)")
    for v in range(nv):
        lines.append(f"\t{load}    {v*lanes*esz}(DI), {breg[v]}")
    for r in range(mr):
        base = bases[r//3]; idx = ["", "(R8*1)", "(R8*2)"][r%3]
        b = bc[r % len(bc)]
        lines.append(f"\tVBROADCASTSS off({base}){idx}, {b}")
        for v in range(nv):
            lines.append(f"\tVFMADD231PS  {breg[v]}, {b}, {reg}{r*nv+v}")
    lines.append(f"\tADDQ         ${nr*esz}, DI")
    w("; \\\n".join(lines))
    w("")
    w(f"""// func {name}(c *float32, ldc int, a *float32, lda int, {"b *uint16, bias *float32" if half else "b, bias *float32"}, k, rows int)
TEXT ·{name}(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), DX
	MOVQ ldc+8(FP), R11
	SHLQ $2, R11
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	MOVQ b+32(FP), DI
	MOVQ bias+40(FP), AX
	MOVQ k+48(FP), CX
	MOVQ rows+56(FP), BX
	LEAQ (R8)(R8*2), R13""")
    for i in range(1, len(bases)):
        w(f"\tLEAQ ({bases[i-1]})(R13*1), {bases[i]}")
    for v in range(nv):
        w(f"\tVMOVUPS {v*lanes*4}(AX), {reg}{v}")
    for r in range(1, mr):
        for v in range(nv):
            w(f"\tVMOVAPS {reg}{v}, {reg}{r*nv+v}")
    w(f"""	CMPQ CX, $4
	JLT  {label}_one

{label}_four:
	{mac}(0)
	{mac}(4)
	{mac}(8)
	{mac}(12)""")
    for b in bases:
        w(f"\tADDQ $16, {b}")
    w(f"""	SUBQ $4, CX
	CMPQ CX, $4
	JGE  {label}_four

{label}_one:
	TESTQ CX, CX
	JZ    {label}_store
	{mac}(0)""")
    for b in bases:
        w(f"\tADDQ $4, {b}")
    w(f"""	DECQ  CX
	JMP   {label}_one

{label}_store:""")
    for r in range(mr):
        for v in range(nv):
            w(f"\tVMOVUPS {reg}{r*nv+v}, {v*lanes*4}(DX)")
        if r < mr-1:
            w(f"\tDECQ    BX\n\tJZ      {label}_done\n\tADDQ    R11, DX")
    w(f"""
{label}_done:
	VZEROUPPER
	RET
""")
kernel("gemm12x32AVX512", 12, 32, 16, "Z", "g512")
kernel("gemm6x16AVX2", 6, 16, 8, "Y", "g256")
w("""// The same kernels for a B panel of half-precision floats (IEEE binary16),
// widened exactly to float32 as they are loaded (F16C's VCVTPH2PS): half the
// memory traffic for weights that are half-precision to begin with.
""")
kernel("gemm12x32F16AVX512", 12, 32, 16, "Z", "h512", True)
kernel("gemm6x16F16AVX2", 6, 16, 8, "Y", "h256", True)

# VDPBF16PS (AVX512_BF16) is not in Go's assembler: encode the register form,
# zmm dst += pairwise bf16 dot(zmm src1, zmm src2), as bytes (EVEX.512.F3.0F38.W0 52 /r).
def vdpbf16ps(dst, src1, src2):
    P0 = ((~dst >> 3) & 1) << 7 | ((~src2 >> 4) & 1) << 6 | ((~src2 >> 3) & 1) << 5 | ((~dst >> 4) & 1) << 4 | 2
    P1 = ((~src1) & 0xF) << 3 | 1 << 2 | 2
    P2 = 2 << 5 | ((~src1 >> 4) & 1) << 3
    modrm = 0xC0 | (dst & 7) << 3 | (src2 & 7)
    return "; ".join("BYTE $0x%02x" % x for x in (0x62, P0, P1, P2, 0x52, modrm))

def kernel_bf16(name, label):
    mr, nr, lanes = 12, 32, 16
    nv = nr // lanes
    nacc = mr * nv
    breg = [nacc + i for i in range(nv)]
    bc = [nacc + nv + i for i in range(6)]
    bases = ["SI", "R9", "R10", "R12"]
    mac = name.upper() + "_STEP"
    w(f"// {mac}(off): one pair of k for the {mr}×{nr} tile, A at byte offset off.")
    w(f"#define {mac}(off) \\")
    lines = [f"\tPREFETCHT0   {PF}(DI)"]
    for v in range(nv):
        lines.append(f"\tVMOVDQU32    {v*64}(DI), Z{breg[v]}")
    for r in range(mr):
        base = bases[r // 3]; idx = ["", "(R8*1)", "(R8*2)"][r % 3]
        b = bc[r % len(bc)]
        lines.append(f"\tVPBROADCASTD off({base}){idx}, Z{b}")
        for v in range(nv):
            lines.append("\t" + vdpbf16ps(r * nv + v, breg[v], b))
    lines.append(f"\tADDQ         ${nr*4}, DI")
    w("; \\\n".join(lines))
    w("")
    w(f"""// func {name}(c *float32, ldc int, a *uint16, lda int, b *uint16, bias *float32, kp, rows int)
//
// A and B are bfloat16: A row-major (lda halves apart), B a panel of kp
// pairs of k, each [nr][2]; the products are summed in float32.
TEXT ·{name}(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), DX
	MOVQ ldc+8(FP), R11
	SHLQ $2, R11
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $1, R8
	MOVQ b+32(FP), DI
	MOVQ bias+40(FP), AX
	MOVQ kp+48(FP), CX
	MOVQ rows+56(FP), BX
	LEAQ (R8)(R8*2), R13""")
    for i in range(1, len(bases)):
        w(f"\tLEAQ ({bases[i-1]})(R13*1), {bases[i]}")
    for v in range(nv):
        w(f"\tVMOVUPS {v*64}(AX), Z{v}")
    for r in range(1, mr):
        for v in range(nv):
            w(f"\tVMOVAPS Z{v}, Z{r*nv+v}")
    w(f"""	CMPQ CX, $4
	JLT  {label}_one

{label}_four:
	{mac}(0)
	{mac}(4)
	{mac}(8)
	{mac}(12)""")
    for b in bases:
        w(f"\tADDQ $16, {b}")
    w(f"""	SUBQ $4, CX
	CMPQ CX, $4
	JGE  {label}_four

{label}_one:
	TESTQ CX, CX
	JZ    {label}_store
	{mac}(0)""")
    for b in bases:
        w(f"\tADDQ $4, {b}")
    w(f"""	DECQ  CX
	JMP   {label}_one

{label}_store:""")
    for r in range(mr):
        for v in range(nv):
            w(f"\tVMOVUPS Z{r*nv+v}, {v*64}(DX)")
        if r < mr - 1:
            w(f"\tDECQ    BX\n\tJZ      {label}_done\n\tADDQ    R11, DX")
    w(f"""
{label}_done:
	VZEROUPPER
	RET
""")

w("""// The same for bfloat16 operands (AVX512_BF16): each VDPBF16PS adds two
// products per lane, twice the multiply-adds of an FMA, at the cost of
// rounding A and B to 8 significant bits (packed.go: PackBF16).
""")
kernel_bf16("gemm12x32BF16AVX512", "b512")

w("""// func toBF16AVX512(dst *uint16, src *float32, n int)
//
// dst[i] = src[i] rounded to bfloat16 (to nearest, ties to even; no NaNs
// expected), for n a multiple of 16.
TEXT ·toBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $1, AX
	VPBROADCASTD AX, Z30
	MOVL $0x7fff, AX
	VPBROADCASTD AX, Z31
	SHRQ $4, CX
	JZ   cvt_done

cvt_loop:
	VMOVDQU32 (SI), Z0
	VPSRLD    $16, Z0, Z1
	VPANDD    Z30, Z1, Z1
	VPADDD    Z31, Z0, Z0
	VPADDD    Z1, Z0, Z0
	VPSRLD    $16, Z0, Z0
	VPMOVDW   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       cvt_loop

cvt_done:
	VZEROUPPER
	RET
""")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'internal', 'kernel', 'gemm_amd64.s'), 'w').write("\n".join(out))
