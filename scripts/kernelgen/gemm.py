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
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'internal', 'kernel', 'gemm_amd64.s'), 'w').write("\n".join(out))
