# neuron_translate_mapping_lookup for the device, written by hand (issue #58).
#
#   int neuron_translate_mapping_lookup(void* ctx, unsigned long long addr,
#                                       unsigned long long* out_start,
#                                       unsigned long long* out_end)
#
# docs/contract.md §3 and §4: the first record r with (addr & r.mask) == r.ptr gives
# *out_start = r.ptr and *out_end = r.ptr + ~r.mask, each skipped when its pointer is NULL,
# and returns 0; no match, or a NULL ctx, returns -1 and stores nothing. The host build
# keeps the Rust function (src/abi.rs); `make prove` proves this machine code against the
# contract, and the qemu tests run it against the host library.
#
# Why by hand: the compiler keeps ctx in a copy so that it can set the miss's -1 up front,
# and builds ~mask from a -1 constant; both cost instructions on every hit
# (bench/README.md has the counts). Here:
#   - the NULL ctx test branches to the miss's own `movi a2, -1`;
#   - end = ptr | ~mask is computed as ptr - mask - 1, word by word. On a hit
#     ptr == addr & mask, so ptr has no bit outside mask and per word
#     ptr | ~mask == ptr + ~mask == ptr - mask - 1, with no carry between the words.
#
# Windowed ABI (docs/toolchain.md fact 16): a2 = ctx, a4/a5 = addr low/high word,
# a6 = out_start, a7 = out_end; the result in a2. Registers of a record under test:
# a8 mask low, a9 ptr low, a10 mask high, a12 ptr high, a11 the masked word.
#
# The record layout (src/layout.rs `offsets`; abi-tests/tests/device_object.rs holds
# these three values to it):
	.set	.LNT_RECORD_SIZE, 32
	.set	.LNT_PTR, 0
	.set	.LNT_MASK, 16

# The low words of record \k: on a mismatch, go to \next.
	.macro	nt_low_word k, next
	l32i	a8, a2, \k * .LNT_RECORD_SIZE + .LNT_MASK
	and	a11, a8, a4
	l32i	a9, a2, \k * .LNT_RECORD_SIZE + .LNT_PTR
	bne	a11, a9, \next
	.endm

# The high words of record \k, up to the compare the caller writes.
	.macro	nt_high_word k
	l32i	a10, a2, \k * .LNT_RECORD_SIZE + .LNT_MASK + 4
	and	a11, a10, a5
	l32i	a12, a2, \k * .LNT_RECORD_SIZE + .LNT_PTR + 4
	.endm

	.section	.text._Z31neuron_translate_mapping_lookupPvyPyS0_,"ax",@progbits
	.global	_Z31neuron_translate_mapping_lookupPvyPyS0_
	.p2align	2
	.type	_Z31neuron_translate_mapping_lookupPvyPyS0_,@function
_Z31neuron_translate_mapping_lookupPvyPyS0_:
	entry	a1, 32
	beqz	a2, .Lnt_lookup_miss
# Records 0 to 2 branch forward to the hit block, records 3 and 4 back to it: a branch
# reaches 128 bytes at most. Which way a branch goes costs nothing in instructions.
	nt_low_word	0, .Lnt_lookup_1
	nt_high_word	0
	beq	a11, a12, .Lnt_lookup_hit
.Lnt_lookup_1:
	nt_low_word	1, .Lnt_lookup_2
	nt_high_word	1
	beq	a11, a12, .Lnt_lookup_hit
.Lnt_lookup_2:
	nt_low_word	2, .Lnt_lookup_3
	nt_high_word	2
	bne	a11, a12, .Lnt_lookup_3
.Lnt_lookup_hit:
	beqz	a6, .Lnt_lookup_end
	s32i	a9, a6, 0
	s32i	a12, a6, 4
.Lnt_lookup_end:
	movi	a2, 0
	beqz	a7, .Lnt_lookup_return
	sub	a8, a9, a8
	addi	a8, a8, -1
	sub	a10, a12, a10
	addi	a10, a10, -1
	s32i	a8, a7, 0
	s32i	a10, a7, 4
.Lnt_lookup_return:
	retw.n
.Lnt_lookup_3:
	nt_low_word	3, .Lnt_lookup_4
	nt_high_word	3
	beq	a11, a12, .Lnt_lookup_hit
.Lnt_lookup_4:
	nt_low_word	4, .Lnt_lookup_miss
	nt_high_word	4
	beq	a11, a12, .Lnt_lookup_hit
.Lnt_lookup_miss:
	movi	a2, -1
	retw.n
	.size	_Z31neuron_translate_mapping_lookupPvyPyS0_, .-_Z31neuron_translate_mapping_lookupPvyPyS0_
