/*
 * The kernel's memory on the emulated Q7, beside runtime.c (docs/customop-api.md, "Device
 * parity"): the device calls on HBM a kernel may make beyond the guide (the library's
 * custom_op.h), neuron_hbm_allocate and neuron_hbm_deallocate over the heap the host
 * runtime models for the call and neuron_memcpy's check (the header moves the bytes);
 * malloc, calloc, realloc, free, operator new and delete over the device's C heap, whose
 * blocks the same model places; where a TCM copy's local buffer lies: the device's copy
 * asserts outside dataram, which the program's static and global data are not; the TCM
 * pool, whose stores the counting plugin watches, and the bytes a copy, memcpy, memmove or
 * memset touches there. Each finding is a request to the runner (protocol.h), made
 * through channel.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "neuron_customop_host/runtime.h"
#include "neuron_translate.h"
#include "channel.h"
#include "protocol.h"


/* support.c: the program's own heap, for what is allocated outside a kernel. */
void *nt_device_own_malloc(size_t n);
void nt_device_own_free(void *p);
int nt_device_in_own_heap(const void *p);
/* Below: whether p is in a heap malloc and new give. */
static int nt_device_in_heap(const void *p);
/* The program's image ends here (the linker's symbol). */
extern char _end[];
/* The core's TCM pool, the dataram heap tcm_malloc and the streams take from, between two
 * red zones of a granule each: the counting plugin's store watch (sdk/qemu/tcm_watch.h)
 * finds the zone by this symbol, and a store anywhere in it outside a live block stops the
 * core. */
#define RED_ZONE NT_CUSTOMOP_TCM_ALIGN
unsigned char nt_device_tcm_zone[RED_ZONE + NT_CUSTOMOP_TCM_POOL_BYTES + RED_ZONE]
    __attribute__((aligned(NT_CUSTOMOP_TCM_ALIGN)));
unsigned char *const nt_device_tcm = nt_device_tcm_zone + RED_ZONE; /* runtime.c */

void nt_device_tcm_span(const void *p, size_t n, uint32_t site); /* below */

/* The call's place: its return address. */
#define SITE ((uint32_t)(uintptr_t)__builtin_return_address(0))

int nt_customop_hbm_allocate(uint32_t bytes, uint64_t *out, uint32_t align)
{
    struct nt_device_hbm_allocate q = {bytes, align, SITE};
    struct nt_device_hbm_allocated a;
    nt_device_copy(&a, NT_DEVICE_ASK(NT_DEVICE_HBM_ALLOCATE, q), sizeof a);
    if (a.status == 0)
        *out = a.address;
    return a.status;
}

int nt_customop_hbm_deallocate(uint64_t addr)
{
    struct nt_device_hbm_free q = {addr, SITE};
    struct nt_device_value32 a;
    nt_device_copy(&a, NT_DEVICE_ASK(NT_DEVICE_HBM_FREE, q), sizeof a);
    return a.value;
}

void nt_customop_hbm_copy(uint64_t addr, uint64_t bytes, const void *local, int write, const void *site)
{
    struct nt_device_hbm_copy q = {addr, bytes, write, (uint32_t)(uintptr_t)site};
    nt_device_tcm_span(local, bytes, (uint32_t)(uintptr_t)site);
    NT_DEVICE_ASK(NT_DEVICE_HBM_COPY, q);
}

/* The local side of a TCM copy, bytes at p: the program's static or global data (above
 * the emulated register block, below the image's end, outside the TCM pool and the heap)
 * is not dataram, and the runner stops the core at the copy's line. The stack is qemu's,
 * above the image. */
void nt_customop_tcm_local(const void *p, size_t bytes, const void *site)
{
    const unsigned char *b = p;
    uintptr_t a = (uintptr_t)p;
    int image = a >= NEURON_TRANSLATE_NX_REG_BASE + NEURON_TRANSLATE_NX_REG_BLOCK_SIZE && a < (uintptr_t)_end;
    int pool = b >= nt_device_tcm && b < nt_device_tcm + NT_CUSTOMOP_TCM_POOL_BYTES;
    nt_device_tcm_span(p, bytes, (uint32_t)(uintptr_t)site);
    if (!image || pool || nt_device_in_heap(p))
        return;
    struct nt_device_not_dataram q = {(uint32_t)a, (uint32_t)bytes, (uint32_t)(uintptr_t)site};
    NT_DEVICE_ASK(NT_DEVICE_NOT_DATARAM, q);
}

/* The live tcm_malloc blocks: pool offset and bytes asked for (a granule each at least,
 * so no more than the pool has granules). */
#define MAX_BLOCKS (NT_CUSTOMOP_TCM_POOL_BYTES / NT_CUSTOMOP_TCM_ALIGN)
static struct {
    uint32_t at, bytes;
} blocks[MAX_BLOCKS];
static uint32_t nblocks;

/* Bytes [p, p + n) a kernel's TCM copy, memcpy, memmove, memset or neuron_memcpy is about
 * to touch: where they meet the TCM pool's zone and are not inside one tcm_malloc block,
 * the runner is asked (a stream's or an accessor's buffer is its own; anything else stops
 * the core at `site`, as the host run's guard pages do). */
void nt_device_tcm_span(const void *p, size_t n, uint32_t site)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)nt_device_tcm_zone, hi = lo + sizeof nt_device_tcm_zone;
    if (!n || a >= hi || (a < lo && n <= lo - a))
        return;
    for (uint32_t k = 0; k < nblocks; ++k) {
        uintptr_t s = (uintptr_t)nt_device_tcm + blocks[k].at;
        if (a >= s && a - s <= blocks[k].bytes && n <= blocks[k].bytes - (a - s))
            return;
    }
    struct nt_device_tcm_span q = {(uint32_t)(a - (uintptr_t)nt_device_tcm), (uint32_t)n, site};
    NT_DEVICE_ASK(NT_DEVICE_TCM_SPAN, q);
}

void *nt_customop_tcm_malloc_at(size_t bytes, const void *site)
{
    struct nt_device_tcm_malloc q = {bytes, (uint32_t)(uintptr_t)site};
    struct nt_device_tcm_at a;
    nt_device_copy(&a, NT_DEVICE_ASK(NT_DEVICE_MALLOC, q), sizeof a);
    if (a.at < 0)
        return NULL;
    if (nblocks < MAX_BLOCKS)
        blocks[nblocks].at = (uint32_t)a.at, blocks[nblocks++].bytes = (uint32_t)bytes;
    return nt_device_tcm + a.at;
}
void *nt_customop_tcm_malloc(size_t bytes) { return nt_customop_tcm_malloc_at(bytes, NULL); }

void nt_customop_tcm_free(void *p)
{
    unsigned char *b = p;
    int pool = b >= nt_device_tcm && b < nt_device_tcm + NT_CUSTOMOP_TCM_POOL_BYTES;
    if (!p)
        return;
    for (uint32_t k = 0; pool && k < nblocks; ++k)
        if (nt_device_tcm + blocks[k].at == b) {
            blocks[k] = blocks[--nblocks];
            break;
        }
    struct nt_device_tcm_free q = {pool ? (int64_t)(b - nt_device_tcm) : -1, (uint32_t)(uintptr_t)p};
    NT_DEVICE_ASK(NT_DEVICE_FREE, q);
}

/* At the kernel's return: no block kept for the next call. */
void nt_device_forget_blocks(void) { nblocks = 0; }

/* The bytes moved: inlined where used, so that a DMA's bytes are counted as the runtime's
 * (nt_device_dma's) and a kernel's memcpy as the kernel's. */
static inline __attribute__((always_inline)) void move_bytes(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if ((((uintptr_t)dp | (uintptr_t)sp) & 3) == 0) {
        for (; n >= 4; n -= 4, dp += 4, sp += 4)
            *(uint32_t *)dp = *(const uint32_t *)sp;
    }
    while (n--)
        *dp++ = *sp++;
}

/* A TCM copy's data, moved by the Q7's DMA engine on the device (the decode's
 * tensorstream-tcm page): the accessors' copies call this instead of memcpy (their TCM
 * side checked by nt_customop_tcm_local), and the runner counts its instructions as the
 * runtime's (its name), not the core's. What moved is counted in bytes (the copies' TCM
 * bytes) beside the instructions. */
void nt_device_dma(void *to, const void *from, size_t bytes) { move_bytes(to, from, bytes); }

/* The C library's, for the kernel (counted as its own): each store's bytes checked
 * against the TCM pool first, at the caller's line. */
void *memcpy(void *d, const void *s, size_t n)
{
    nt_device_tcm_span(d, n, SITE);
    move_bytes(d, s, n);
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    nt_device_tcm_span(d, n, SITE);
    if (dp <= sp || dp >= sp + n)
        move_bytes(d, s, n);
    else
        while (n--)
            dp[n] = sp[n];
    return d;
}

void *memset(void *d, int c, size_t n)
{
    unsigned char *dp = d;
    nt_device_tcm_span(d, n, SITE);
    while (n--)
        *dp++ = (unsigned char)c;
    return d;
}

/* The device's C heap, where a kernel's malloc and operator new take from: the runner's
 * model (sdk/runtime/src/percore/c_heap.rs) says where each block goes in these bytes, or
 * that the device's heap has no room (operator new's stops the core there); outside a
 * kernel (a static constructor) the program's own heap gives it (support.c). */
static unsigned char c_heap[NT_CUSTOMOP_C_HEAP_BYTES] __attribute__((aligned(64)));

static int nt_device_in_c_heap(const void *p)
{
    return (const unsigned char *)p >= c_heap && (const unsigned char *)p < c_heap + sizeof c_heap;
}

/* Whether p is in a heap malloc and new give (dataram on the device). */
static int nt_device_in_heap(const void *p) { return nt_device_in_c_heap(p) || nt_device_in_own_heap(p); }

static void *nt_device_heap_take(size_t n, size_t align, int new, uint32_t site)
{
    struct nt_device_heap_take q = {n, (uint32_t)align, (uint32_t)new, site};
    struct nt_device_heap_at a;
    nt_device_copy(&a, NT_DEVICE_ASK(NT_DEVICE_HEAP_TAKE, q), sizeof a);
    if (a.at == -2)
        return nt_device_own_malloc(n);
    return a.at < 0 ? NULL : c_heap + a.at;
}

static void nt_device_heap_give(void *p)
{
    if (nt_device_in_c_heap(p)) {
        struct nt_device_heap_give q = {(uint32_t)((unsigned char *)p - c_heap)};
        NT_DEVICE_ASK(NT_DEVICE_HEAP_GIVE, q);
    } else {
        nt_device_own_free(p);
    }
}

/* The bytes a block at p holds, at most `most` (what realloc copies): to its heap's end. */
static size_t nt_device_heap_room(const void *p, size_t most)
{
    size_t left = nt_device_in_c_heap(p) ? (size_t)(c_heap + sizeof c_heap - (const unsigned char *)p) : most;
    return left < most ? left : most;
}

static void *nt_device_heap_realloc(void *p, size_t n, uint32_t site)
{
    if (!p)
        return nt_device_heap_take(n, 0, 0, site);
    if (!n) {
        nt_device_heap_give(p);
        return NULL;
    }
    unsigned char *q = nt_device_heap_take(n, 0, 0, site);
    if (q) {
        nt_device_copy(q, p, nt_device_heap_room(p, n));
        nt_device_heap_give(p);
    }
    return q;
}

static void *nt_device_heap_calloc(size_t count, size_t size, uint32_t site)
{
    if (size && count > (size_t)-1 / size)
        return NULL;
    unsigned char *p = nt_device_heap_take(count * size, 0, 0, site);
    for (size_t i = 0; p && i < count * size; ++i)
        p[i] = 0;
    return p;
}

void *malloc(size_t n) { return nt_device_heap_take(n, 0, 0, SITE); }
void *calloc(size_t count, size_t size) { return nt_device_heap_calloc(count, size, SITE); }
void *realloc(void *p, size_t n) { return nt_device_heap_realloc(p, n, SITE); }
void free(void *p)
{
    if (p)
        nt_device_heap_give(p);
}
void *_Znwj(size_t n) { return nt_device_heap_take(n, 0, 1, SITE); }
void *_Znaj(size_t n) { return nt_device_heap_take(n, 0, 1, SITE); }
void *_ZnwjRKSt9nothrow_t(size_t n, const void *tag) { return (void)tag, nt_device_heap_take(n, 0, 0, SITE); }
void *_ZnajRKSt9nothrow_t(size_t n, const void *tag) { return (void)tag, nt_device_heap_take(n, 0, 0, SITE); }
void _ZdlPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag, free(p); }
void _ZdaPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag, free(p); }
void _ZdlPv(void *p) { free(p); }
void _ZdaPv(void *p) { free(p); }
void _ZdlPvj(void *p, size_t n) { (void)n, free(p); }
void _ZdaPvj(void *p, size_t n) { (void)n, free(p); }

/* The runtime's C ABI for the host run's renamed calls: the same heap here. */
void *nt_customop_heap_malloc(size_t bytes) { return nt_device_heap_take(bytes, 0, 0, SITE); }
void *nt_customop_heap_new(size_t bytes) { return nt_device_heap_take(bytes, 0, 1, SITE); }
void *nt_customop_heap_calloc(size_t count, size_t size) { return nt_device_heap_calloc(count, size, SITE); }
void *nt_customop_heap_aligned(size_t align, size_t bytes)
{
    return align && !(align & (align - 1)) ? nt_device_heap_take(bytes, align, 0, SITE) : NULL;
}
int nt_customop_heap_posix_memalign(void **out, size_t align, size_t bytes)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *))
        return 22; /* EINVAL */
    *out = nt_device_heap_take(bytes, align, 0, SITE);
    return *out ? 0 : 12; /* ENOMEM */
}
void nt_customop_heap_free(void *p) { free(p); }
void *nt_customop_heap_realloc(void *p, size_t bytes) { return nt_device_heap_realloc(p, bytes, SITE); }
char *nt_customop_heap_strndup(const char *s, size_t most)
{
    size_t len = 0;
    while (len < most && s[len])
        ++len;
    char *p = nt_device_heap_take(len + 1, 0, 0, SITE);
    if (p) {
        nt_device_copy(p, s, len);
        p[len] = 0;
    }
    return p;
}
char *nt_customop_heap_strdup(const char *s) { return nt_customop_heap_strndup(s, (size_t)-1); }
