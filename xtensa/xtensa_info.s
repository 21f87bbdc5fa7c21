# The .xtensa.info note GNU as writes into every Xtensa object and GNU ld reads: ld warns
# when inputs disagree on the ABI and drops the section from inputs that lack it. The
# Rust/LLVM pipeline writes none, so it is added here: windowed ABI (ABI=0), literals
# PC-relative through l32r (USE_ABSOLUTE_LITERALS=0). Format as binutils' xtensa-config:
# an ELF note named "Xtensa_Info", type 1 (XTINFO_TYPE).
	.section	.xtensa.info,"",@note
	.4byte	12                  # namesz: "Xtensa_Info\0"
	.4byte	.Ldesc_end - .Ldesc # descsz
	.4byte	1                   # XTINFO_TYPE
	.asciz	"Xtensa_Info"
.Ldesc:
	.ascii	"USE_ABSOLUTE_LITERALS=0\nABI=0\n"
	.byte	0, 0
.Ldesc_end:
