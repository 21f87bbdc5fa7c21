# Start-up of a kernel's program on the emulated Q7 (qemu-xtensa, linux-user), windowed
# ABI: qemu starts it with WINDOWBASE 0, WINDOWSTART 1, the stack pointer in a1 and PS.WOE
# set. _start installs the handler that completes MULSH and MULUH (mulhigh.S), then calls
# main(0, 0) (the ntx glue, which binds the kernels and calls
# nt_customop_main) through l32r + callx8 (the GNU linker for Xtensa cannot relocate call8
# across objects here) and exits with its result: syscall number in a2, arguments in a6,
# a3, a4, a5, a8, a9 (Linux/Xtensa; exit_group is 119).
	.section	.text._start,"ax",@progbits
	.literal_position
	.literal	.Lmain, main
	.literal	.Lmul_high, nt_device_mul_high_install
	.global	_start
	.p2align	2
_start:
	movi	a0, 0
	l32r	a8, .Lmul_high
	callx8	a8
	movi	a10, 0
	movi	a11, 0
	l32r	a8, .Lmain
	callx8	a8
	mov	a6, a10
	movi	a2, 119
	syscall

# int printf(const char *format, ...): the arguments as the windowed ABI passes them (a3-a7,
# then the caller's stack, which starts 48 bytes above this frame's stack pointer) to
# nt_device_printf(format, registers, stack) (printf.c).
	.section	.text.printf,"ax",@progbits
	.literal_position
	.literal	.Lprintf_body, nt_device_printf
	.global	printf
	.type	printf, @function
	.p2align	2
printf:
	entry	a1, 48
	s32i	a3, a1, 0
	s32i	a4, a1, 4
	s32i	a5, a1, 8
	s32i	a6, a1, 12
	s32i	a7, a1, 16
	mov	a10, a2
	mov	a11, a1
	addi	a12, a1, 48
	l32r	a8, .Lprintf_body
	callx8	a8
	mov	a2, a10
	retw.n
	.size	printf, .-printf

# long nt_device_syscall(long nr, const long args[6])
	.section	.text.nt_device_syscall,"ax",@progbits
	.global	nt_device_syscall
	.type	nt_device_syscall, @function
	.p2align	2
nt_device_syscall:
	entry	a1, 32
	l32i	a6, a3, 0
	l32i	a4, a3, 8
	l32i	a5, a3, 12
	l32i	a8, a3, 16
	l32i	a9, a3, 20
	l32i	a3, a3, 4
	syscall
	retw.n
	.size	nt_device_syscall, .-nt_device_syscall

# uint64_t __muldi3(uint64_t a, uint64_t b): the low 64 bits of a * b, for code built
# without MUL32_HIGH that calls it (kernels and the device runtime are built with it, and
# multiply inline; the high half of al * bl comes from 16-bit halves here, so that this
# routine runs on any core). a in a2 (low), a3; b in a4, a5; the result in a2, a3.
	.section	.text.__muldi3,"ax",@progbits
	.global	__muldi3
	.type	__muldi3, @function
	.p2align	2
__muldi3:
	entry	a1, 32
	mull	a6, a3, a4
	mull	a7, a2, a5
	add	a6, a6, a7
	extui	a8, a2, 0, 16
	extui	a9, a2, 16, 16
	extui	a10, a4, 0, 16
	extui	a11, a4, 16, 16
	mull	a12, a8, a10
	mull	a13, a9, a10
	mull	a14, a8, a11
	mull	a15, a9, a11
	extui	a7, a12, 16, 16
	extui	a8, a13, 0, 16
	add	a7, a7, a8
	extui	a8, a14, 0, 16
	add	a7, a7, a8
	extui	a7, a7, 16, 16
	extui	a8, a13, 16, 16
	add	a15, a15, a8
	extui	a8, a14, 16, 16
	add	a15, a15, a8
	add	a15, a15, a7
	add	a3, a15, a6
	mull	a2, a2, a4
	retw.n
	.size	__muldi3, .-__muldi3
