/*
 * neuron_translate.h: the window table and the neuron_translate family of translation.o
 * (libneuroncustomop.a), for C and C++ custom operators.
 *
 * Generated from the library's sources by `make header`; do not edit. `make test` fails
 * when this copy is stale.
 */

#ifndef NEURON_TRANSLATE_H
#define NEURON_TRANSLATE_H

#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#error "neuron_translate.h needs C99 or later (stdint.h, unsigned long long): compile with -std=c99, -std=gnu11 or newer"
#else

/* The library's version. The original ABI never changes; an addition bumps MINOR. */
#define NEURON_TRANSLATE_VERSION_MAJOR 0
#define NEURON_TRANSLATE_VERSION_MINOR 1
#define NEURON_TRANSLATE_VERSION_PATCH 0
#define NEURON_TRANSLATE_VERSION_STRING "0.1.0"
/* One number for #if: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define NEURON_TRANSLATE_VERSION 100

#include <stddef.h>
#include <stdint.h>
/* Both types are 8-aligned on every target, as on the device (GCC and Clang spelling). */
#define NEURON_TRANSLATE_ALIGNED(n) __attribute__((aligned(n)))

/**
 * Number of windows in a table.
 */
#define NEURON_TRANSLATE_RECORDS 5

/**
 * Number of reusable windows: a refill replaces windows 0, 1 and 2 in turn; windows 3 and
 * 4 are never replaced.
 */
#define NEURON_TRANSLATE_REUSABLE_SLOTS 3

/**
 * One translation window, `_map_record_t` (32 bytes).
 *
 * A 64-bit SoC address `a` belongs to the window when `(a & mask) == ptr`; it then
 * translates to the 32-bit local address `window + ((uint32_t)a & ~(uint32_t)mask)`.
 */
typedef struct NEURON_TRANSLATE_ALIGNED(8) {
  /**
   * The masked tag: the value `addr & mask` takes for every address in the window.
   */
  uint64_t ptr;
  /**
   * NX-local base address of the window (32-bit).
   */
  uint32_t window;
  /**
   * Padding (implicit in the original; always written as 0 by this library).
   */
  uint32_t _pad;
  /**
   * Selects the tag bits; `~mask` selects the offset bits.
   */
  uint64_t mask;
  /**
   * NX-local address of the window register a refill of this window programs (on the
   * device only the low 32 bits are used); 0 for a window that is never refilled.
   */
  uint64_t reg_location;
} _map_record_t;

/**
 * The window table, `_translation_ctx_t` (168 bytes).
 */
typedef struct NEURON_TRANSLATE_ALIGNED(8) {
  /**
   * The five windows, searched in order.
   */
  _map_record_t records[NEURON_TRANSLATE_RECORDS];
  /**
   * The reusable window (0, 1 or 2) the next refill replaces.
   */
  uint8_t next_alloc;
  /**
   * Tail padding (always written as 0 by this library).
   */
  uint8_t _pad[7];
} _translation_ctx_t;

/* The layout the device code addresses, checked by your compiler. */
#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(_map_record_t) == 32, "sizeof(_map_record_t) must be 32");
static_assert(sizeof(_translation_ctx_t) == 168, "sizeof(_translation_ctx_t) must be 168");
static_assert(offsetof(_map_record_t, ptr) == 0, "offsetof(_map_record_t, ptr) must be 0");
static_assert(offsetof(_map_record_t, window) == 8, "offsetof(_map_record_t, window) must be 8");
static_assert(offsetof(_map_record_t, mask) == 16, "offsetof(_map_record_t, mask) must be 16");
static_assert(offsetof(_map_record_t, reg_location) == 24, "offsetof(_map_record_t, reg_location) must be 24");
static_assert(offsetof(_translation_ctx_t, records) == 0, "offsetof(_translation_ctx_t, records) must be 0");
static_assert(offsetof(_translation_ctx_t, next_alloc) == 160, "offsetof(_translation_ctx_t, next_alloc) must be 160");
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(_map_record_t) == 32, "sizeof(_map_record_t) must be 32");
_Static_assert(sizeof(_translation_ctx_t) == 168, "sizeof(_translation_ctx_t) must be 168");
_Static_assert(offsetof(_map_record_t, ptr) == 0, "offsetof(_map_record_t, ptr) must be 0");
_Static_assert(offsetof(_map_record_t, window) == 8, "offsetof(_map_record_t, window) must be 8");
_Static_assert(offsetof(_map_record_t, mask) == 16, "offsetof(_map_record_t, mask) must be 16");
_Static_assert(offsetof(_map_record_t, reg_location) == 24, "offsetof(_map_record_t, reg_location) must be 24");
_Static_assert(offsetof(_translation_ctx_t, records) == 0, "offsetof(_translation_ctx_t, records) must be 0");
_Static_assert(offsetof(_translation_ctx_t, next_alloc) == 160, "offsetof(_translation_ctx_t, next_alloc) must be 160");
#else
typedef char neuron_translate_layout_pin_0[(sizeof(_map_record_t) == 32) ? 1 : -1];
typedef char neuron_translate_layout_pin_1[(sizeof(_translation_ctx_t) == 168) ? 1 : -1];
typedef char neuron_translate_layout_pin_2[(offsetof(_map_record_t, ptr) == 0) ? 1 : -1];
typedef char neuron_translate_layout_pin_3[(offsetof(_map_record_t, window) == 8) ? 1 : -1];
typedef char neuron_translate_layout_pin_4[(offsetof(_map_record_t, mask) == 16) ? 1 : -1];
typedef char neuron_translate_layout_pin_5[(offsetof(_map_record_t, reg_location) == 24) ? 1 : -1];
typedef char neuron_translate_layout_pin_6[(offsetof(_translation_ctx_t, records) == 0) ? 1 : -1];
typedef char neuron_translate_layout_pin_7[(offsetof(_translation_ctx_t, next_alloc) == 160) ? 1 : -1];
#endif

/* The NX register block (NX-local addresses): ENGINE_BASE_ADDR is read by
 * _init_translate_ctx; a refill of slot 0, 1, 2 programs MEM_WINDOW3, 5, 6 (_HI, then
 * _LO). A host program that calls _init_translate_ctx or refills the initial table
 * must map NEURON_TRANSLATE_NX_REG_BLOCK_SIZE bytes at NEURON_TRANSLATE_NX_REG_BASE. */
#define NEURON_TRANSLATE_NX_REG_BASE 0x00100000u
#define NEURON_TRANSLATE_NX_REG_BLOCK_SIZE 0x1000u
#define NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO 0x00100028u
#define NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI 0x0010002cu
#define NEURON_TRANSLATE_MEM_WINDOW3_LO 0x00100218u
#define NEURON_TRANSLATE_MEM_WINDOW3_HI 0x0010021cu
#define NEURON_TRANSLATE_MEM_WINDOW5_LO 0x00100228u
#define NEURON_TRANSLATE_MEM_WINDOW5_HI 0x0010022cu
#define NEURON_TRANSLATE_MEM_WINDOW6_LO 0x00100230u
#define NEURON_TRANSLATE_MEM_WINDOW6_HI 0x00100234u

/*
 * What your image must define: start_exit.o of the vendor archive does. The original
 * translation.o needs both; this library needs only the HBM scratch address. A host
 * program or a test defines them itself, e.g. in C
 *     unsigned long long extended_isa_sdk_hbm_scratch = 0x4000000000ull;
 * (the declaration below gives it the ELF name), and in C++ the same variable inside
 * namespace extended_isa { namespace sdk { ... } }.
 */
#ifdef __cplusplus
/**
 * The core's data scratch map (defined by start_exit.o). The original translation.o
 * imports it; this library does not need it (its table lives in its own .bss).
 */
extern unsigned char data_scratch_map[];
/**
 * SoC/HBM address of the core's HBM scratch region (defined by start_exit.o).
 */
namespace extended_isa { namespace sdk { extern unsigned long long hbm_scratch; } }
#else
/**
 * The core's data scratch map (defined by start_exit.o). The original translation.o
 * imports it; this library does not need it (its table lives in its own .bss).
 */
extern unsigned char data_scratch_map[];
/**
 * SoC/HBM address of the core's HBM scratch region (defined by start_exit.o).
 */
extern unsigned long long extended_isa_sdk_hbm_scratch __asm__("_ZN12extended_isa3sdk11hbm_scratchE");
#endif /* __cplusplus */

/*
 * The functions, _ctx and _sbuf_window, by their original names. In C++ the functions
 * have C++ linkage and mangle to the original's ELF names; in C, asm labels give the
 * same names. neuron_translate_span is this library's addition, with C linkage in both.
 */
#ifdef __cplusplus

/**
 * Translate a 64-bit SoC/HBM address to a 32-bit NX-local address; on a miss, reprogram
 * the round-robin victim window (slots 0..2) and its SoC window register. Returns NULL
 * when ctx is NULL.
 */
void *neuron_translate(void *ctx, unsigned long long addr);

/**
 * The current window table (the value of _ctx); NULL before _init_translate_ctx().
 */
_translation_ctx_t *neuron_translate_ctx(void);

/**
 * Which SoC range the window holding addr maps, without side effects (never refills, never
 * touches a register): on a hit writes the window's first SoC address to *out_start and
 * its last (inclusive) to *out_end and returns 0; on a miss (or NULL ctx) returns -1 and
 * writes nothing. NULL outputs are skipped.
 */
int neuron_translate_mapping_lookup(void *ctx, unsigned long long addr, unsigned long long *out_start, unsigned long long *out_end);

/**
 * Build the initial window table and point _ctx at it: reads ENGINE_BASE_ADDR from the NX
 * register block (NX-local 0x00100028, which must be mapped), sets _sbuf_window to that
 * base minus 41 MiB, and fills three empty reusable 16 MiB windows and two pinned 64 MiB
 * windows (SBUF, HBM scratch). Calling it again re-reads the register and resets the
 * table.
 */
void _init_translate_ctx(void);

/**
 * The window table in use (a pointer, 4 bytes on the device); NULL before init.
 */
extern _translation_ctx_t *_ctx;

/**
 * SoC address of SBUF, ENGINE_BASE_ADDR - 41 MiB, set by _init_translate_ctx (0 before);
 * read by wrapper_api.o to address SBUF outputs.
 */
extern uint64_t _sbuf_window;

/**
 * neuron_translate, plus how far it reaches: returns the local address of addr (refilling
 * on a miss, exactly as neuron_translate) and writes to *out_span how many bytes from
 * there translate contiguously through the same window, at most len. The span ends at the
 * window's end, at the top of the 32-bit local space and before any address an earlier
 * window would match. Translate once per span instead of once per element. NULL ctx:
 * returns NULL, *out_span = 0; NULL out_span is skipped; len 0 translates as usual with a
 * span of 0.
 */
extern "C" void *neuron_translate_span(void *ctx, unsigned long long addr, unsigned long long len, unsigned long long *out_span);

#else

/**
 * Translate a 64-bit SoC/HBM address to a 32-bit NX-local address; on a miss, reprogram
 * the round-robin victim window (slots 0..2) and its SoC window register. Returns NULL
 * when ctx is NULL.
 */
void *neuron_translate(void *ctx, unsigned long long addr) __asm__("_Z16neuron_translatePvy");

/**
 * The current window table (the value of _ctx); NULL before _init_translate_ctx().
 */
_translation_ctx_t *neuron_translate_ctx(void) __asm__("_Z20neuron_translate_ctxv");

/**
 * Which SoC range the window holding addr maps, without side effects (never refills, never
 * touches a register): on a hit writes the window's first SoC address to *out_start and
 * its last (inclusive) to *out_end and returns 0; on a miss (or NULL ctx) returns -1 and
 * writes nothing. NULL outputs are skipped.
 */
int neuron_translate_mapping_lookup(void *ctx, unsigned long long addr, unsigned long long *out_start, unsigned long long *out_end) __asm__("_Z31neuron_translate_mapping_lookupPvyPyS0_");

/**
 * Build the initial window table and point _ctx at it: reads ENGINE_BASE_ADDR from the NX
 * register block (NX-local 0x00100028, which must be mapped), sets _sbuf_window to that
 * base minus 41 MiB, and fills three empty reusable 16 MiB windows and two pinned 64 MiB
 * windows (SBUF, HBM scratch). Calling it again re-reads the register and resets the
 * table.
 */
void _init_translate_ctx(void) __asm__("_Z19_init_translate_ctxv");

/**
 * The window table in use (a pointer, 4 bytes on the device); NULL before init.
 */
extern _translation_ctx_t *_ctx __asm__("_ctx");

/**
 * SoC address of SBUF, ENGINE_BASE_ADDR - 41 MiB, set by _init_translate_ctx (0 before);
 * read by wrapper_api.o to address SBUF outputs.
 */
extern uint64_t _sbuf_window __asm__("_sbuf_window");

/**
 * neuron_translate, plus how far it reaches: returns the local address of addr (refilling
 * on a miss, exactly as neuron_translate) and writes to *out_span how many bytes from
 * there translate contiguously through the same window, at most len. The span ends at the
 * window's end, at the top of the 32-bit local space and before any address an earlier
 * window would match. Translate once per span instead of once per element. NULL ctx:
 * returns NULL, *out_span = 0; NULL out_span is skipped; len 0 translates as usual with a
 * span of 0.
 */
void *neuron_translate_span(void *ctx, unsigned long long addr, unsigned long long len, unsigned long long *out_span);

#endif /* __cplusplus */

/*
 * The host model of the translation hardware: on a Linux x86_64 or aarch64 host, the
 * host library maps the NX register block, simulated SoC memory (SBUF and an HBM
 * region) and the five NX windows at their NX-local addresses, and remaps a window
 * when a refill programs its MEM_WINDOW register, so that the pointers
 * neuron_translate returns read and write SoC memory as on the device. Not in the
 * device library.
 */
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#ifdef __cplusplus
extern "C" {
#endif

/** The views neuron_translate_host_start keeps, in bytes of SoC memory they show. */
#define NEURON_TRANSLATE_HOST_KEEP_DEFAULT 0x40000000ull

/**
 * What the model has counted since it started, or since the counters were last reset.
 */
typedef struct {
  /**
   * Calls of `neuron_translate` and `neuron_translate_span`.
   */
  uint64_t translates;
  /**
   * Hits, by slot.
   */
  uint64_t hits[NEURON_TRANSLATE_RECORDS];
  /**
   * Refills, by victim slot.
   */
  uint64_t refills[NEURON_TRANSLATE_RECORDS];
  /**
   * 32-bit stores to window registers (two per refill).
   */
  uint64_t register_writes;
  /**
   * NX windows remapped onto a new SoC base.
   */
  uint64_t remaps;
} neuron_translate_host_counters_t;

/**
 * What the model keeps and holds (`neuron_translate_host_memory`): its memory use.
 */
typedef struct {
  /**
   * Views kept now (moved aside with their page tables when their window moved away).
   */
  uint64_t kept_views;
  /**
   * The most it keeps (the configuration's `keep`, in views of 16 MiB).
   */
  uint64_t keep_limit_views;
  /**
   * SoC memory the kept views show, in bytes.
   */
  uint64_t kept_bytes;
  /**
   * SoC memory that exists (written or read through a view at least once), in bytes.
   */
  uint64_t soc_resident_bytes;
  /**
   * Views kept, since the start or the last reset of the counters.
   */
  uint64_t parked;
  /**
   * Refills that brought a kept view back, page table and all.
   */
  uint64_t reused;
  /**
   * Kept views dropped to stay within the limit (the one kept longest ago each time).
   */
  uint64_t evicted;
} neuron_translate_host_memory_t;

/**
 * Start the host model: map the NX register block at NEURON_TRANSLATE_NX_REG_BASE with
 * ENGINE_BASE_ADDR = engine_base, SBUF (64 MiB at engine_base - 41 MiB), an HBM region of
 * hbm_size bytes at hbm_base (sparse: untouched pages cost nothing), and the five NX
 * windows, the pinned ones over SBUF and the 64 MiB around hbm_scratch (which the program
 * must also define). Call it before _init_translate_ctx. Fails if a model runs already
 * or an address it needs is taken. It keeps up to NEURON_TRANSLATE_HOST_KEEP_DEFAULT
 * bytes of views (neuron_translate_host_start_keeping).
 */
int neuron_translate_host_start(unsigned long long engine_base,
                                unsigned long long hbm_base,
                                unsigned long long hbm_size,
                                unsigned long long hbm_scratch);

/**
 * neuron_translate_host_start, keeping up to keep bytes of views: when a reusable window
 * moves away from a region the kernel streamed through, the model keeps its view (and
 * so its page table) and moves it back when a refill brings the region back, instead of
 * faulting on every page again; past the limit, the view kept longest ago goes. 0 keeps
 * none; each view shows 16 MiB and costs its page table.
 */
int neuron_translate_host_start_keeping(unsigned long long engine_base,
                                        unsigned long long hbm_base,
                                        unsigned long long hbm_size,
                                        unsigned long long hbm_scratch,
                                        unsigned long long keep);

/**
 * Stop the host model: unmap the register block, the windows and SoC memory. Every
 * pointer neuron_translate returned is invalid afterwards.
 */
int neuron_translate_host_stop(void);

/**
 * Allocate size bytes of HBM aligned to align (a power of two); their SoC address goes to
 * *out_soc. The memory reads as zeros. A NULL out_soc fails before anything is allocated.
 *
 * # Safety
 * `out_soc` is NULL or a valid pointer.
 */
int neuron_translate_host_alloc(unsigned long long size,
                                unsigned long long align,
                                unsigned long long *out_soc);

/**
 * Copy len bytes from src into SoC memory at soc (not through a window). A len of 0
 * copies nothing and succeeds while a model runs, whatever src and soc are; a NULL src
 * with a len above 0 fails.
 *
 * # Safety
 * `src` is valid for `len` bytes, or `len` is 0.
 */
int neuron_translate_host_write(unsigned long long soc, const void *src, size_t len);

/**
 * Copy len bytes of SoC memory at soc into dst (not through a window). A len of 0 copies
 * nothing and succeeds while a model runs, whatever dst and soc are; a NULL dst with a
 * len above 0 fails.
 *
 * # Safety
 * `dst` is valid for `len` bytes of writes, or `len` is 0.
 */
int neuron_translate_host_read(unsigned long long soc, void *dst, size_t len);

/**
 * Copy the counters (translate calls, hits and refills by slot, register writes, window
 * remaps) to *out. A NULL out fails.
 *
 * # Safety
 * `out` is NULL or a valid pointer.
 */
int neuron_translate_host_counters(neuron_translate_host_counters_t *out);

/**
 * Copy what the model keeps and holds (kept views, the limit, SoC memory in use, views
 * kept, brought back and dropped) to *out. A NULL out fails.
 *
 * # Safety
 * `out` is NULL or a valid pointer.
 */
int neuron_translate_host_memory(neuron_translate_host_memory_t *out);

/**
 * Write every later translate call to the file at path, one line each, in the trace
 * format `ntx simulate` replays; NULL stops tracing and flushes the file.
 *
 * # Safety
 * `path` is NULL or a NUL-terminated string.
 */
int neuron_translate_host_trace(const char *path);

/**
 * Why the last failing neuron_translate_host_ call failed (a NUL-terminated string that
 * stays valid until the next failure), or NULL.
 */
const char *neuron_translate_host_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* host model */

#endif /* C99 or later */

#endif /* NEURON_TRANSLATE_H */
