/*
 * extended_isa::sdk::hbm_scratch, which the translation library imports (start_exit.o
 * defines it on the device): the runtime sets it before _init_translate_ctx. Defined weak,
 * so that a program that defines it itself (the project's test support does) keeps its own
 * and the two never clash at link time.
 */
__attribute__((weak)) unsigned long long nt_customop_hbm_scratch __asm__("_ZN12extended_isa3sdk11hbm_scratchE") = 0;
