/*
 * The reference model: the seed page's own reconstruction of translation.cpp, kept as
 * close to the page as C allows, for differential tests against the Rust library.
 *
 *   ref_translate       docs/original.md §4 (the annotated C), with the miss path of docs/original.md §6
 *   ref_mapping_lookup  docs/original.md §7: the window's SoC range, as docs/contract.md §3 reads it
 *
 * It is deliberately NOT hardened: it indexes records[next_alloc] as is, stores through
 * reg_location as is and dereferences ctx and the outputs as is. The tests never hand it
 * inputs on which it would fault; they name each such deviation of the library instead.
 *
 * Compiled for the host by abi-tests/support/build.rs and for the device by the qemu tests.
 * The types are declared here, from the seed's DWARF (§2), not from the library's header:
 * the model must not share a source of truth with the thing it checks.
 */
#include <stdint.h>

typedef struct {
    uint64_t ptr;          /* +0  masked tag */
    uint32_t window;       /* +8  NX-local base */
    uint32_t pad_;         /* +12 implicit padding */
    uint64_t mask;         /* +16 */
    uint64_t reg_location; /* +24 SoC window register */
} ref_map_record_t;

typedef struct {
    ref_map_record_t records[5]; /* +0 */
    uint8_t next_alloc;          /* +160 */
    uint8_t pad_[7];
} ref_translation_ctx_t;

_Static_assert(sizeof(ref_map_record_t) == 32, "docs/original.md §2: _map_record_t is 32 bytes");
_Static_assert(sizeof(ref_translation_ctx_t) == 168, "docs/original.md §2: _translation_ctx_t is 168 bytes");

/* docs/original.md §6: the miss path masks the low word with an 0xFF000000-like constant (a12) and
 * keeps the high word of the address as the tag's high word (a5 is stored unmasked);
 * the offset mask is a11 >> 8 = 0x00FFFFFF. */
#define REF_ALLOC_MASK_LO 0xFF000000u
#define REF_ALLOC_OFFSET_LO 0x00FFFFFFu

/* docs/original.md §6: the two barriers around the register stores (memw on the device). */
#if defined(__xtensa__)
#define REF_BARRIER() __asm__ volatile("memw" ::: "memory")
#else
#define REF_BARRIER() __sync_synchronize()
#endif

static void *ref_translate_miss(ref_translation_ctx_t *ctx, unsigned long long addr)
{
    uint32_t addr_lo = (uint32_t)addr;
    uint32_t addr_hi = (uint32_t)(addr >> 32);
    ref_map_record_t *r = &ctx->records[ctx->next_alloc];  /* 215..21b */
    uint32_t tag_lo = addr_lo & REF_ALLOC_MASK_LO;          /* 226 */
    uint32_t window = r->window;                            /* 229 */
    volatile uint32_t *reg = (volatile uint32_t *)(uintptr_t)r->reg_location; /* 229 */
    r->ptr = ((uint64_t)addr_hi << 32) | tag_lo;            /* 231, 233 */
    REF_BARRIER();                                          /* 23b */
    reg[1] = addr_hi;                                       /* 23e: *(reg_location+4) */
    reg[0] = tag_lo;                                        /* 240: *(reg_location+0) */
    REF_BARRIER();                                          /* 242 */
    ctx->next_alloc = (uint8_t)((ctx->next_alloc + 1) % 3); /* 245..25e */
    return (void *)(uintptr_t)(window + (addr_lo & REF_ALLOC_OFFSET_LO)); /* 233 add */
}

/* docs/original.md §4, "The complete fast path as annotated C". */
void *ref_translate(void *ctx_, unsigned long long addr)
{
    ref_translation_ctx_t *ctx = (ref_translation_ctx_t *)ctx_;
    for (unsigned k = 0; k < 5; ++k) {
        const ref_map_record_t *r = &ctx->records[k];
        if (((addr & r->mask) ^ r->ptr) == 0) {
            uint32_t off = (uint32_t)addr & ~(uint32_t)r->mask;
            return (void *)(uintptr_t)(r->window + off);
        }
    }
    return ref_translate_miss(ctx, addr);
}

/* docs/original.md §7: the same five-way match; on a hit the window's SoC range is written out, its
 * tag to the third argument and the tag plus the NOT of the mask (the seed's xor with -1,
 * then a 64-bit add carry-corrected with saltu) to the fourth, and 0 is returned; on a
 * miss -1 and nothing is written. */
int ref_mapping_lookup(void *ctx_, unsigned long long addr, unsigned long long *out_start,
                       unsigned long long *out_end)
{
    ref_translation_ctx_t *ctx = (ref_translation_ctx_t *)ctx_;
    for (unsigned k = 0; k < 5; ++k) {
        const ref_map_record_t *r = &ctx->records[k];
        if (((addr & r->mask) ^ r->ptr) == 0) {
            *out_start = r->ptr;
            *out_end = r->ptr + (r->mask ^ ~0ull);
            return 0;
        }
    }
    return -1;
}
