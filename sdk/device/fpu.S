# The Q7's single-precision division and square root as its FPU computes them (the FP_DIV
# and FP_SQRT options, docs/q7-isa.md): no divide or square-root instruction, but the
# steps of one, which the Xtensa ISA defines to give the correctly rounded result. LLVM
# calls __divsf3 for a float division and sqrtf for a square root; these definitions make
# them those steps (about 30 instructions) instead of compiler-builtins' soft-float
# routines (about 145), so the emulated Q7's counts are the Q7's. Windowed ABI: the
# operands' bits in a2 (and a3), the result's in a2; f0-f9 are scratch (caller-saved).
# Checked against the host's division and square root, bit for bit, by check_isa.py.

# float __divsf3(float a, float b): seed 1/b (DIV0.S) and refine it by fused steps
# (MADDN.S) on the operands reduced to [1, 2) (NEXP01.S); MKDADJ.S, ADDEXP.S and
# ADDEXPM.S carry the exponents and the special cases; DIVN.S rounds the quotient once.
	.section	.text.__divsf3,"ax",@progbits
	.global	__divsf3
	.type	__divsf3, @function
	.p2align	2
__divsf3:
	entry	a1, 32
	wfr	f1, a2			# a
	wfr	f2, a3			# b
	div0.s	f3, f2			# y0: the seed of 1/b
	nexp01.s	f4, f2		# bn: b reduced
	const.s	f5, 1			# e = 1 - bn * y0
	maddn.s	f5, f4, f3
	mov.s	f6, f3			# y: the reciprocal refined
	mov.s	f7, f2			# ex: the exponents' adjustment
	nexp01.s	f8, f1		# an: a reduced
	maddn.s	f6, f5, f3
	const.s	f5, 1
	const.s	f0, 0			# q: the quotient
	neg.s	f9, f8			# r: the remainder
	maddn.s	f5, f4, f6
	maddn.s	f0, f9, f3
	mkdadj.s	f7, f1
	maddn.s	f6, f5, f6
	maddn.s	f9, f4, f0
	const.s	f5, 1
	maddn.s	f5, f4, f6
	maddn.s	f0, f9, f6
	neg.s	f9, f8
	maddn.s	f6, f5, f6
	maddn.s	f9, f4, f0
	addexpm.s	f0, f7
	addexp.s	f6, f7
	divn.s	f0, f9, f6		# the quotient, rounded once
	rfr	a2, f0
	retw.n
	.size	__divsf3, .-__divsf3

# float sqrtf(float a): seed 1/sqrt(a) (SQRT0.S), refine it and the root by fused steps
# on a reduced to [1, 4) (NEXP01.S keeps the exponent's parity); MKSADJ.S, ADDEXP.S and
# ADDEXPM.S carry the exponent and the special cases; DIVN.S rounds the root once.
	.section	.text.sqrtf,"ax",@progbits
	.global	sqrtf
	.type	sqrtf, @function
	.p2align	2
sqrtf:
	entry	a1, 32
	wfr	f1, a2			# a
	sqrt0.s	f2, f1			# y: the seed of 1/sqrt(a)
	const.s	f3, 0			# t1 = y * y
	maddn.s	f3, f2, f2
	nexp01.s	f4, f1		# hn: a reduced, then halved
	const.s	f0, 3			# r
	addexp.s	f4, f0
	maddn.s	f0, f3, f4
	nexp01.s	f3, f1
	neg.s	f5, f3			# h2
	maddn.s	f2, f0, f2
	const.s	f0, 0
	const.s	f6, 0			# t5
	const.s	f7, 0			# h
	maddn.s	f0, f5, f2
	maddn.s	f6, f2, f4
	const.s	f4, 3
	maddn.s	f7, f4, f2
	maddn.s	f3, f0, f0
	maddn.s	f4, f6, f2
	neg.s	f2, f7
	maddn.s	f0, f3, f2
	maddn.s	f7, f4, f7
	mksadj.s	f2, f1
	nexp01.s	f1, f1
	maddn.s	f1, f0, f0
	neg.s	f3, f7
	addexpm.s	f0, f2
	addexp.s	f3, f2
	divn.s	f0, f1, f3		# the root, rounded once
	rfr	a2, f0
	retw.n
	.size	sqrtf, .-sqrtf
