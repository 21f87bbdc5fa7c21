# Start-up stub for test programs under qemu-xtensa (linux-user), windowed ABI.
#
# qemu starts a static program with WINDOWBASE 0, WINDOWSTART 1, the stack pointer in a1
# and PS.WOE set. _start calls test_main() with call8 (through l32r + callx8: the lx106
# linker cannot relocate call8) and exits with its result. The syscall convention of
# Linux/Xtensa: number in a2, arguments in a6, a3, a4, a5; exit is 118, write is 13.
	.section	.text._start,"ax",@progbits
	.literal_position
	.literal	.Ltest_main, test_main
	.global	_start
	.p2align	2
_start:
	movi	a0, 0
	l32r	a8, .Ltest_main
	callx8	a8
	mov	a6, a10
	movi	a2, 118
	syscall

# int sys_write(int fd, const void *buf, unsigned len)
	.section	.text.sys_write,"ax",@progbits
	.global	sys_write
	.type	sys_write, @function
	.p2align	2
sys_write:
	entry	a1, 32
	mov	a6, a2
	movi	a2, 13
	syscall
	retw.n
	.size	sys_write, .-sys_write
