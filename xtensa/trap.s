# The deterministic trap of contract §4 for the device object.
#
# Upstream rustc has no inline assembly for Xtensa, and LLVM lowers `llvm.trap` to a call
# to an external `abort` (an extra import, an ABI break). So the one instruction the trap
# needs is written here and assembled into the same object as the Rust code. The symbol
# has no .global: it stays local to translation.o.
	.section	.text.unlikely.__neuron_translate_trap,"ax",@progbits
	.p2align	2
	.type	__neuron_translate_trap,@function
__neuron_translate_trap:
	entry	a1, 16
	ill
	.size	__neuron_translate_trap, .-__neuron_translate_trap
