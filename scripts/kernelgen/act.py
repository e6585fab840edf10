# Generates internal/kernel/act_amd64.s: python3 scripts/kernelgen/act.py (go generate ./internal/kernel runs it).
import os
import struct
def bits(f): return struct.unpack('<I', struct.pack('<f', f))[0]
consts = [
 ("one", 1.0), ("half", 0.5), ("rsqrt2", 0.7071067811865476), ("expmin", -80.0),
 ("log2e", 1.4426950408889634), ("ln2hi", 0.693359375), ("ln2lo", -2.12194440e-4),
 ("c2", 1/2), ("c3", 1/6), ("c4", 1/24), ("c5", 1/120), ("c6", 1/720),
 ("geluzero", -8.0), ("zmax", 64.0),
]
erfc = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277]
for i, c in enumerate(erfc): consts.append((f"e{i}", c))
off = {}
out = ["//go:build amd64", "", '#include "textflag.h"', "",
"""// Vectorised element-wise routines for the embedder (see act.go): e^x for
// softmax and GELU. Constants are stored eight times over, so each is a
// ready YMM operand at actK<>+32·i.""", ""]
for i, (name, v) in enumerate(consts):
    off[name] = 32*i
    for j in range(4):
        b = bits(v)
        out.append(f"DATA actK<>+{32*i+8*j}(SB)/8, ${(b<<32)|b:#x} // {name} = {v}" if j == 0 else f"DATA actK<>+{32*i+8*j}(SB)/8, ${(b<<32)|b:#x}")
# abs mask as int
i = len(consts); off["absmask"] = 32*i
for j in range(4):
    out.append(f"DATA actK<>+{32*i+8*j}(SB)/8, $0x7fffffff7fffffff")
i += 1; off["bias"] = 32*i
for j in range(4):
    b = 127 << 23
    out.append(f"DATA actK<>+{32*i+8*j}(SB)/8, ${(b<<32)|b:#x}")
i += 1
out.append(f"GLOBL actK<>(SB), RODATA|NOPTR, ${32*i}")
out.append("")
K = lambda n: f"{off[n]}(R8)"
# EXP macro: x in reg X (clobbered: becomes e^x), uses T1, T2.
out.append(f"""// EXP(X, N, P): X = e^X for X <= ~88. Below -80 X is clamped, so the
// result is then 1.8e-35 rather than less: no product meets a subnormal,
// which would slow the arithmetic down many times. X = n·ln2 + r with
// |r| <= ln2/2; e^r by its Taylor series to degree 6 (relative error < 2e-7
// with float32 rounding); 2^n from the exponent bits. Needs R8 = actK<>.
#define EXP(X, N, P) \\
	VMAXPS       {K('expmin')}, X, X; \\
	VMULPS       {K('log2e')}, X, N; \\
	VROUNDPS     $0, N, N; \\
	VFNMADD231PS {K('ln2hi')}, N, X; \\
	VFNMADD231PS {K('ln2lo')}, N, X; \\
	VMOVUPS      {K('c6')}, P; \\
	VFMADD213PS  {K('c5')}, X, P; \\
	VFMADD213PS  {K('c4')}, X, P; \\
	VFMADD213PS  {K('c3')}, X, P; \\
	VFMADD213PS  {K('c2')}, X, P; \\
	VFMADD213PS  {K('one')}, X, P; \\
	VFMADD213PS  {K('one')}, X, P; \\
	VCVTPS2DQ    N, N; \\
	VPSLLD       $23, N, N; \\
	VPADDD       {K('bias')}, N, N; \\
	VMULPS       N, P, X
""")
out.append(f"""// func expShiftAVX2(x *float32, n int, shift, scale float32) float32
//
// x[i] = e^((x[i]-shift)·scale) for i < n (a multiple of 8); returns the sum.
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	LEAQ         actK<>(SB), R8
	VBROADCASTSS shift+16(FP), Y15
	VBROADCASTSS scale+20(FP), Y14
	VXORPS       Y13, Y13, Y13
	SHRQ         $3, CX
	JZ           exp_done

exp_loop:
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0
	VMULPS  Y14, Y0, Y0
	EXP(Y0, Y1, Y2)
	VMOVUPS Y0, (SI)
	VADDPS  Y0, Y13, Y13
	ADDQ    $32, SI
	DECQ    CX
	JNZ     exp_loop

exp_done:
	VEXTRACTF128 $1, Y13, X1
	VADDPS       X1, X13, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func geluAVX2(x *float32, n int)
//
// x[i] = x[i]·Φ(x[i]) for i < n (a multiple of 8), Φ the normal CDF:
// Φ(x) = ½·erfc(-x/√2), with erfc(z) = t·e^(-z² + P(t)), t = 1/(1 + z/2)
// for z = |x|/√2 >= 0 and P of degree 9 (Numerical Recipes' erfcc: relative
// error < 1.2e-7), reflected for x > 0. Below -8 the result is 0.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ actK<>(SB), R8
	SHRQ $3, CX
	JZ   gelu_done

gelu_loop:
	VMOVUPS      (SI), Y0
	VANDPS       {K('absmask')}, Y0, Y1
	VMULPS       {K('rsqrt2')}, Y1, Y1
	VMULPS       {K('half')}, Y1, Y2
	VADDPS       {K('one')}, Y2, Y2
	VMOVUPS      {K('one')}, Y3
	VDIVPS       Y2, Y3, Y2
	VMOVUPS      {K('e9')}, Y3""")
for i in range(8, -1, -1):
    out.append(f"\tVFMADD213PS  {K('e%d' % i)}, Y2, Y3")
out.append(f"""	VMULPS       Y1, Y1, Y4
	VSUBPS       Y4, Y3, Y3
	EXP(Y3, Y4, Y5)
	VMULPS       Y2, Y3, Y3
	VMULPS       {K('half')}, Y3, Y3
	VMOVUPS      {K('one')}, Y4
	VSUBPS       Y3, Y4, Y4
	VBLENDVPS    Y0, Y3, Y4, Y4
	VMULPS       Y0, Y4, Y4
	VCMPPS       $2, {K('geluzero')}, Y0, Y5
	VANDNPS      Y4, Y5, Y4
	VMOVUPS      Y4, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          gelu_loop

gelu_done:
	VZEROUPPER
	RET
""")

# The AVX-512 GELU: the same arithmetic on 16 lanes, constants by embedded
# broadcast, the division by VRCP14PS and one Newton step (relative error
# < 1e-7; |x|/√2 is capped at 64, where Φ is 1 or 0 in float32, so that
# infinities stay out of it), the blends by mask registers.
B = lambda n: f"{off[n]}(R8)"
out.append(f"""// EXP512(X, N, P): EXP on ZMM registers.
#define EXP512(X, N, P) \\
	VMAXPS.BCST       {B('expmin')}, X, X; \\
	VMULPS.BCST       {B('log2e')}, X, N; \\
	VRNDSCALEPS       $0, N, N; \\
	VFNMADD231PS.BCST {B('ln2hi')}, N, X; \\
	VFNMADD231PS.BCST {B('ln2lo')}, N, X; \\
	VBROADCASTSS      {B('c6')}, P; \\
	VFMADD213PS.BCST  {B('c5')}, X, P; \\
	VFMADD213PS.BCST  {B('c4')}, X, P; \\
	VFMADD213PS.BCST  {B('c3')}, X, P; \\
	VFMADD213PS.BCST  {B('c2')}, X, P; \\
	VFMADD213PS.BCST  {B('one')}, X, P; \\
	VFMADD213PS.BCST  {B('one')}, X, P; \\
	VCVTPS2DQ         N, N; \\
	VPSLLD            $23, N, N; \\
	VPADDD.BCST       {B('bias')}, N, N; \\
	VMULPS            N, P, X

// func geluAVX512(x *float32, n int)
//
// geluAVX2 on 16 lanes, for n a multiple of 16.
TEXT ·geluAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ actK<>(SB), R8
	SHRQ $4, CX
	JZ   gelu512_done

gelu512_loop:
	VMOVUPS           (SI), Z0
	VANDPS.BCST       {B('absmask')}, Z0, Z1
	VMULPS.BCST       {B('rsqrt2')}, Z1, Z1
	VMINPS.BCST       {B('zmax')}, Z1, Z1
	VMULPS.BCST       {B('half')}, Z1, Z2
	VADDPS.BCST       {B('one')}, Z2, Z2
	VRCP14PS          Z2, Z6
	VMOVAPS           Z6, Z7
	VFNMADD213PS.BCST {B('one')}, Z2, Z7
	VFMADD231PS       Z6, Z7, Z6
	VMOVAPS           Z6, Z2
	VBROADCASTSS      {B('e9')}, Z3""")
for i in range(8, -1, -1):
    out.append(f"\tVFMADD213PS.BCST  {B('e%d' % i)}, Z2, Z3")
out.append(f"""	VMULPS            Z1, Z1, Z4
	VSUBPS            Z4, Z3, Z3
	EXP512(Z3, Z4, Z5)
	VMULPS            Z2, Z3, Z3
	VMULPS.BCST       {B('half')}, Z3, Z3
	VBROADCASTSS      {B('one')}, Z4
	VSUBPS            Z3, Z4, Z4
	VPMOVD2M          Z0, K1
	VBLENDMPS         Z3, Z4, K1, Z4
	VMULPS            Z0, Z4, Z4
	VCMPPS.BCST       $2, {B('geluzero')}, Z0, K2
	VPXORD            Z4, Z4, K2, Z4
	VMOVUPS           Z4, (SI)
	ADDQ              $64, SI
	DECQ              CX
	JNZ               gelu512_loop

gelu512_done:
	VZEROUPPER
	RET
""")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'internal', 'kernel', 'act_amd64.s'), 'w').write("\n".join(out))
