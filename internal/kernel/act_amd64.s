//go:build amd64

#include "textflag.h"

// Vectorised element-wise routines for the embedder (see act.go): e^x for
// softmax and GELU. Constants are stored eight times over, so each is a
// ready YMM operand at actK<>+32·i.

DATA actK<>+0(SB)/8, $0x3f8000003f800000 // one = 1.0
DATA actK<>+8(SB)/8, $0x3f8000003f800000
DATA actK<>+16(SB)/8, $0x3f8000003f800000
DATA actK<>+24(SB)/8, $0x3f8000003f800000
DATA actK<>+32(SB)/8, $0x3f0000003f000000 // half = 0.5
DATA actK<>+40(SB)/8, $0x3f0000003f000000
DATA actK<>+48(SB)/8, $0x3f0000003f000000
DATA actK<>+56(SB)/8, $0x3f0000003f000000
DATA actK<>+64(SB)/8, $0x3f3504f33f3504f3 // rsqrt2 = 0.7071067811865476
DATA actK<>+72(SB)/8, $0x3f3504f33f3504f3
DATA actK<>+80(SB)/8, $0x3f3504f33f3504f3
DATA actK<>+88(SB)/8, $0x3f3504f33f3504f3
DATA actK<>+96(SB)/8, $0xc2a00000c2a00000 // expmin = -80.0
DATA actK<>+104(SB)/8, $0xc2a00000c2a00000
DATA actK<>+112(SB)/8, $0xc2a00000c2a00000
DATA actK<>+120(SB)/8, $0xc2a00000c2a00000
DATA actK<>+128(SB)/8, $0x3fb8aa3b3fb8aa3b // log2e = 1.4426950408889634
DATA actK<>+136(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA actK<>+144(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA actK<>+152(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA actK<>+160(SB)/8, $0x3f3180003f318000 // ln2hi = 0.693359375
DATA actK<>+168(SB)/8, $0x3f3180003f318000
DATA actK<>+176(SB)/8, $0x3f3180003f318000
DATA actK<>+184(SB)/8, $0x3f3180003f318000
DATA actK<>+192(SB)/8, $0xb95e8083b95e8083 // ln2lo = -0.00021219444
DATA actK<>+200(SB)/8, $0xb95e8083b95e8083
DATA actK<>+208(SB)/8, $0xb95e8083b95e8083
DATA actK<>+216(SB)/8, $0xb95e8083b95e8083
DATA actK<>+224(SB)/8, $0x3f0000003f000000 // c2 = 0.5
DATA actK<>+232(SB)/8, $0x3f0000003f000000
DATA actK<>+240(SB)/8, $0x3f0000003f000000
DATA actK<>+248(SB)/8, $0x3f0000003f000000
DATA actK<>+256(SB)/8, $0x3e2aaaab3e2aaaab // c3 = 0.16666666666666666
DATA actK<>+264(SB)/8, $0x3e2aaaab3e2aaaab
DATA actK<>+272(SB)/8, $0x3e2aaaab3e2aaaab
DATA actK<>+280(SB)/8, $0x3e2aaaab3e2aaaab
DATA actK<>+288(SB)/8, $0x3d2aaaab3d2aaaab // c4 = 0.041666666666666664
DATA actK<>+296(SB)/8, $0x3d2aaaab3d2aaaab
DATA actK<>+304(SB)/8, $0x3d2aaaab3d2aaaab
DATA actK<>+312(SB)/8, $0x3d2aaaab3d2aaaab
DATA actK<>+320(SB)/8, $0x3c0888893c088889 // c5 = 0.008333333333333333
DATA actK<>+328(SB)/8, $0x3c0888893c088889
DATA actK<>+336(SB)/8, $0x3c0888893c088889
DATA actK<>+344(SB)/8, $0x3c0888893c088889
DATA actK<>+352(SB)/8, $0x3ab60b613ab60b61 // c6 = 0.001388888888888889
DATA actK<>+360(SB)/8, $0x3ab60b613ab60b61
DATA actK<>+368(SB)/8, $0x3ab60b613ab60b61
DATA actK<>+376(SB)/8, $0x3ab60b613ab60b61
DATA actK<>+384(SB)/8, $0xc1000000c1000000 // geluzero = -8.0
DATA actK<>+392(SB)/8, $0xc1000000c1000000
DATA actK<>+400(SB)/8, $0xc1000000c1000000
DATA actK<>+408(SB)/8, $0xc1000000c1000000
DATA actK<>+416(SB)/8, $0x4280000042800000 // zmax = 64.0
DATA actK<>+424(SB)/8, $0x4280000042800000
DATA actK<>+432(SB)/8, $0x4280000042800000
DATA actK<>+440(SB)/8, $0x4280000042800000
DATA actK<>+448(SB)/8, $0xbfa1fc4ebfa1fc4e // e0 = -1.26551223
DATA actK<>+456(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA actK<>+464(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA actK<>+472(SB)/8, $0xbfa1fc4ebfa1fc4e
DATA actK<>+480(SB)/8, $0x3f8000c73f8000c7 // e1 = 1.00002368
DATA actK<>+488(SB)/8, $0x3f8000c73f8000c7
DATA actK<>+496(SB)/8, $0x3f8000c73f8000c7
DATA actK<>+504(SB)/8, $0x3f8000c73f8000c7
DATA actK<>+512(SB)/8, $0x3ebf88fb3ebf88fb // e2 = 0.37409196
DATA actK<>+520(SB)/8, $0x3ebf88fb3ebf88fb
DATA actK<>+528(SB)/8, $0x3ebf88fb3ebf88fb
DATA actK<>+536(SB)/8, $0x3ebf88fb3ebf88fb
DATA actK<>+544(SB)/8, $0x3dc636c93dc636c9 // e3 = 0.09678418
DATA actK<>+552(SB)/8, $0x3dc636c93dc636c9
DATA actK<>+560(SB)/8, $0x3dc636c93dc636c9
DATA actK<>+568(SB)/8, $0x3dc636c93dc636c9
DATA actK<>+576(SB)/8, $0xbe3ec24cbe3ec24c // e4 = -0.18628806
DATA actK<>+584(SB)/8, $0xbe3ec24cbe3ec24c
DATA actK<>+592(SB)/8, $0xbe3ec24cbe3ec24c
DATA actK<>+600(SB)/8, $0xbe3ec24cbe3ec24c
DATA actK<>+608(SB)/8, $0x3e8ec7cc3e8ec7cc // e5 = 0.27886807
DATA actK<>+616(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA actK<>+624(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA actK<>+632(SB)/8, $0x3e8ec7cc3e8ec7cc
DATA actK<>+640(SB)/8, $0xbf914e5dbf914e5d // e6 = -1.13520398
DATA actK<>+648(SB)/8, $0xbf914e5dbf914e5d
DATA actK<>+656(SB)/8, $0xbf914e5dbf914e5d
DATA actK<>+664(SB)/8, $0xbf914e5dbf914e5d
DATA actK<>+672(SB)/8, $0x3fbe87b03fbe87b0 // e7 = 1.48851587
DATA actK<>+680(SB)/8, $0x3fbe87b03fbe87b0
DATA actK<>+688(SB)/8, $0x3fbe87b03fbe87b0
DATA actK<>+696(SB)/8, $0x3fbe87b03fbe87b0
DATA actK<>+704(SB)/8, $0xbf527892bf527892 // e8 = -0.82215223
DATA actK<>+712(SB)/8, $0xbf527892bf527892
DATA actK<>+720(SB)/8, $0xbf527892bf527892
DATA actK<>+728(SB)/8, $0xbf527892bf527892
DATA actK<>+736(SB)/8, $0x3e2ef9453e2ef945 // e9 = 0.17087277
DATA actK<>+744(SB)/8, $0x3e2ef9453e2ef945
DATA actK<>+752(SB)/8, $0x3e2ef9453e2ef945
DATA actK<>+760(SB)/8, $0x3e2ef9453e2ef945
DATA actK<>+768(SB)/8, $0x7fffffff7fffffff
DATA actK<>+776(SB)/8, $0x7fffffff7fffffff
DATA actK<>+784(SB)/8, $0x7fffffff7fffffff
DATA actK<>+792(SB)/8, $0x7fffffff7fffffff
DATA actK<>+800(SB)/8, $0x3f8000003f800000
DATA actK<>+808(SB)/8, $0x3f8000003f800000
DATA actK<>+816(SB)/8, $0x3f8000003f800000
DATA actK<>+824(SB)/8, $0x3f8000003f800000
GLOBL actK<>(SB), RODATA|NOPTR, $832

// EXP(X, N, P): X = e^X for X <= ~88. Below -80 X is clamped, so the
// result is then 1.8e-35 rather than less: no product meets a subnormal,
// which would slow the arithmetic down many times. X = n·ln2 + r with
// |r| <= ln2/2; e^r by its Taylor series to degree 6 (relative error < 2e-7
// with float32 rounding); 2^n from the exponent bits. Needs R8 = actK<>.
#define EXP(X, N, P) \
	VMAXPS       96(R8), X, X; \
	VMULPS       128(R8), X, N; \
	VROUNDPS     $0, N, N; \
	VFNMADD231PS 160(R8), N, X; \
	VFNMADD231PS 192(R8), N, X; \
	VMOVUPS      352(R8), P; \
	VFMADD213PS  320(R8), X, P; \
	VFMADD213PS  288(R8), X, P; \
	VFMADD213PS  256(R8), X, P; \
	VFMADD213PS  224(R8), X, P; \
	VFMADD213PS  0(R8), X, P; \
	VFMADD213PS  0(R8), X, P; \
	VCVTPS2DQ    N, N; \
	VPSLLD       $23, N, N; \
	VPADDD       800(R8), N, N; \
	VMULPS       N, P, X

// func expShiftAVX2(x *float32, n int, shift, scale float32) float32
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
	VANDPS       768(R8), Y0, Y1
	VMULPS       64(R8), Y1, Y1
	VMULPS       32(R8), Y1, Y2
	VADDPS       0(R8), Y2, Y2
	VMOVUPS      0(R8), Y3
	VDIVPS       Y2, Y3, Y2
	VMOVUPS      736(R8), Y3
	VFMADD213PS  704(R8), Y2, Y3
	VFMADD213PS  672(R8), Y2, Y3
	VFMADD213PS  640(R8), Y2, Y3
	VFMADD213PS  608(R8), Y2, Y3
	VFMADD213PS  576(R8), Y2, Y3
	VFMADD213PS  544(R8), Y2, Y3
	VFMADD213PS  512(R8), Y2, Y3
	VFMADD213PS  480(R8), Y2, Y3
	VFMADD213PS  448(R8), Y2, Y3
	VMULPS       Y1, Y1, Y4
	VSUBPS       Y4, Y3, Y3
	EXP(Y3, Y4, Y5)
	VMULPS       Y2, Y3, Y3
	VMULPS       32(R8), Y3, Y3
	VMOVUPS      0(R8), Y4
	VSUBPS       Y3, Y4, Y4
	VBLENDVPS    Y0, Y3, Y4, Y4
	VMULPS       Y0, Y4, Y4
	VCMPPS       $2, 384(R8), Y0, Y5
	VANDNPS      Y4, Y5, Y4
	VMOVUPS      Y4, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          gelu_loop

gelu_done:
	VZEROUPPER
	RET

// EXP512(X, N, P): EXP on ZMM registers.
#define EXP512(X, N, P) \
	VMAXPS.BCST       96(R8), X, X; \
	VMULPS.BCST       128(R8), X, N; \
	VRNDSCALEPS       $0, N, N; \
	VFNMADD231PS.BCST 160(R8), N, X; \
	VFNMADD231PS.BCST 192(R8), N, X; \
	VBROADCASTSS      352(R8), P; \
	VFMADD213PS.BCST  320(R8), X, P; \
	VFMADD213PS.BCST  288(R8), X, P; \
	VFMADD213PS.BCST  256(R8), X, P; \
	VFMADD213PS.BCST  224(R8), X, P; \
	VFMADD213PS.BCST  0(R8), X, P; \
	VFMADD213PS.BCST  0(R8), X, P; \
	VCVTPS2DQ         N, N; \
	VPSLLD            $23, N, N; \
	VPADDD.BCST       800(R8), N, N; \
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
	VANDPS.BCST       768(R8), Z0, Z1
	VMULPS.BCST       64(R8), Z1, Z1
	VMINPS.BCST       416(R8), Z1, Z1
	VMULPS.BCST       32(R8), Z1, Z2
	VADDPS.BCST       0(R8), Z2, Z2
	VRCP14PS          Z2, Z6
	VMOVAPS           Z6, Z7
	VFNMADD213PS.BCST 0(R8), Z2, Z7
	VFMADD231PS       Z6, Z7, Z6
	VMOVAPS           Z6, Z2
	VBROADCASTSS      736(R8), Z3
	VFMADD213PS.BCST  704(R8), Z2, Z3
	VFMADD213PS.BCST  672(R8), Z2, Z3
	VFMADD213PS.BCST  640(R8), Z2, Z3
	VFMADD213PS.BCST  608(R8), Z2, Z3
	VFMADD213PS.BCST  576(R8), Z2, Z3
	VFMADD213PS.BCST  544(R8), Z2, Z3
	VFMADD213PS.BCST  512(R8), Z2, Z3
	VFMADD213PS.BCST  480(R8), Z2, Z3
	VFMADD213PS.BCST  448(R8), Z2, Z3
	VMULPS            Z1, Z1, Z4
	VSUBPS            Z4, Z3, Z3
	EXP512(Z3, Z4, Z5)
	VMULPS            Z2, Z3, Z3
	VMULPS.BCST       32(R8), Z3, Z3
	VBROADCASTSS      0(R8), Z4
	VSUBPS            Z3, Z4, Z4
	VPMOVD2M          Z0, K1
	VBLENDMPS         Z3, Z4, K1, Z4
	VMULPS            Z0, Z4, Z4
	VCMPPS.BCST       $2, 384(R8), Z0, K2
	VPXORD            Z4, Z4, K2, Z4
	VMOVUPS           Z4, (SI)
	ADDQ              $64, SI
	DECQ              CX
	JNZ               gelu512_loop

gelu512_done:
	VZEROUPPER
	RET
