# MULSH and MULUH (the Q7's MUL32_HIGH option: the high 32 bits of a signed or unsigned
# 32x32 product) on the emulated Q7. Kernels are built with the option, as the Q7's are,
# but no qemu core executes it: each one raises an illegal instruction, which qemu-user
# delivers as 4, and the handler here does what the instruction does (the product
# from 16-bit halves, written to its register in the interrupted context; the next
# instruction found as the core finds it, a zero-overhead loop's end included), then
# returns through the restorer below. The instruction counts once, in its own block (qemu
# ends a block at it); the handler and the restorer are the device runtime's (their names
# begin nt_device_), so the runner leaves them out of the counts, and the count plugin
# leaves them out of the call tree (docs/q7-isa.md, "MULSH and MULUH").
#
# The frame is qemu-user's for Linux/Xtensa (linux-user/xtensa/signal.c): the handler gets
# (signal, siginfo, ucontext) in a2-a4 after its entry; the ucontext's machine context
# starts 20 bytes in (flags, link, a 12-byte stack record) with the pc, ps, lbeg, lend,
# lcount, sar, acclo and acchi words, then a0-a15 of the interrupted window. SAR is not
# saved there: nothing here touches it (shifts by constants only), nor the FPU. Offsets
# into the ucontext: pc 20, lbeg 28, lend 32, lcount 36, a0 52. System calls: SIGILL 4,
# rt_sigreturn 225, rt_sigaction 226.

	.section	.text.nt_device_mul_high,"ax",@progbits
	.literal_position
	.literal	.Lhandler, nt_device_mul_high
	.literal	.Lrestorer, nt_device_sigreturn
	.literal	.Lflags, 0x04000004		# SA_RESTORER | SA_SIGINFO

# int nt_device_mul_high_install(void): the handler for 4 (rt_sigaction's result).
	.global	nt_device_mul_high_install
	.type	nt_device_mul_high_install, @function
	.p2align	2
nt_device_mul_high_install:
	entry	a1, 48
	l32r	a8, .Lhandler
	s32i	a8, a1, 0
	l32r	a8, .Lflags
	s32i	a8, a1, 4
	l32r	a8, .Lrestorer
	s32i	a8, a1, 8
	movi	a8, 0
	s32i	a8, a1, 12
	s32i	a8, a1, 16
	movi	a2, 226
	movi	a6, 4
	mov	a3, a1
	movi	a4, 0
	movi	a5, 8
	syscall
	retw.n
	.size	nt_device_mul_high_install, .-nt_device_mul_high_install

# void nt_device_mul_high(int signal, siginfo_t *info, ucontext_t *uc)
	.global	nt_device_mul_high
	.type	nt_device_mul_high, @function
	.p2align	2
nt_device_mul_high:
	entry	a1, 48
	l32i	a5, a4, 20
	l8ui	a6, a5, 0
	l8ui	a7, a5, 1
	l8ui	a8, a5, 2
	# RRR format: op0 (bits 3-0) 0, op1 (19-16) 2, op2 (23-20) 10 (MULUH) or 11 (MULSH).
	extui	a9, a6, 0, 4
	bnez	a9, .Lother
	extui	a9, a8, 0, 4
	addi	a9, a9, -2
	bnez	a9, .Lother
	extui	a9, a8, 5, 3
	addi	a9, a9, -5
	bnez	a9, .Lother
	extui	a9, a8, 4, 1		# 1: MULSH
	extui	a10, a6, 4, 4		# t
	extui	a11, a7, 0, 4		# s
	extui	a12, a7, 4, 4		# r
	addx4	a11, a11, a4
	l32i	a11, a11, 52		# as
	addx4	a10, a10, a4
	l32i	a10, a10, 52		# at
	# The unsigned high word from the four 16x16 products.
	extui	a13, a11, 0, 16		# as low
	extui	a14, a11, 16, 16	# as high
	extui	a15, a10, 0, 16		# at low
	extui	a6, a10, 16, 16		# at high
	mull	a7, a13, a15		# low x low
	mull	a8, a14, a15		# high x low
	mull	a13, a13, a6		# low x high
	mull	a14, a14, a6		# high x high
	extui	a7, a7, 16, 16
	extui	a15, a8, 0, 16
	add	a7, a7, a15
	extui	a15, a13, 0, 16
	add	a7, a7, a15		# the middle column and its carry
	extui	a8, a8, 16, 16
	add	a14, a14, a8
	extui	a13, a13, 16, 16
	add	a14, a14, a13
	extui	a7, a7, 16, 16
	add	a14, a14, a7
	beqz	a9, .Lstore
	# Signed: less the other operand for each negative one (two's complement).
	bgez	a11, 1f
	sub	a14, a14, a10
1:	bgez	a10, .Lstore
	sub	a14, a14, a11
.Lstore:
	addx4	a12, a12, a4
	s32i	a14, a12, 52
	# The next instruction: at a zero-overhead loop's end with iterations left, its start.
	addi	a5, a5, 3
	l32i	a6, a4, 32
	bne	a5, a6, 2f
	l32i	a7, a4, 36
	beqz	a7, 2f
	addi	a7, a7, -1
	s32i	a7, a4, 36
	l32i	a5, a4, 28
2:	s32i	a5, a4, 20
	retw
.Lother:
	# Another illegal instruction: 4's default action, which ends the program when
	# the instruction runs again, as it did before this handler.
	movi	a8, 0
	s32i	a8, a1, 0
	s32i	a8, a1, 4
	s32i	a8, a1, 8
	s32i	a8, a1, 12
	s32i	a8, a1, 16
	movi	a2, 226
	movi	a6, 4
	mov	a3, a1
	movi	a4, 0
	movi	a5, 8
	syscall
	retw
	.size	nt_device_mul_high, .-nt_device_mul_high

# Where the handler returns to: rt_sigreturn, on the frame qemu built (a1 points at it).
	.global	nt_device_sigreturn
	.type	nt_device_sigreturn, @function
	.p2align	2
nt_device_sigreturn:
	movi	a2, 225
	syscall
	.size	nt_device_sigreturn, .-nt_device_sigreturn
