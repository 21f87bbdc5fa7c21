/*
 * The custom-op SDK's C ABI (sdk/include/neuron_customop_host/runtime.h) on the emulated
 * Q7: what a kernel built for the device calls. Element accesses and copies run here, on
 * the core, through the translation object it is linked with; tensors live in the model's
 * HBM (fd NT_DEVICE_FD_HBM), which the three reusable windows show by mmap as the window
 * registers change (the pinned windows: memory of their own, SBUF and scratch are not the
 * model's here); TCM is 16 KiB of this program. What the host runtime decides (checks,
 * tensors, operations, reports, the pool's layout) is asked of the runner's core process
 * over fd NT_DEVICE_FD_RPC (protocol.h). The runner leaves this file's functions out of
 * the instruction counts (the host runtime's work).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "neuron_customop_host/runtime.h"
#include "neuron_translate.h"
#include "channel.h"
#include "protocol.h"


enum { SYS_MMAP2 = 80 };
/* Linux/Xtensa's values (MAP_ANONYMOUS is 0x800 there). */
enum { PROT_RW = 3, MAP_SHARED_FIXED = 0x11, MAP_PRIVATE_ANON_FIXED = 0x812 };

#define MAX_TENSORS 4096u
#define MAX_KERNELS 64u
#define PINNED_AT 0x10000000u
#define RECORDS NEURON_TRANSLATE_RECORDS          /* the window table's records */
#define REUSABLE NEURON_TRANSLATE_REUSABLE_SLOTS /* the first of them, the reusable ones */

/* The emulated NX register block, placed at NEURON_TRANSLATE_NX_REG_BASE by the link. */
volatile uint32_t nt_nxregs[NEURON_TRANSLATE_NX_REG_BLOCK_SIZE / 4] __attribute__((section(".nxregs"), aligned(4096)));
#define NXREG(addr) nt_nxregs[((addr) - NEURON_TRANSLATE_NX_REG_BASE) / 4]

unsigned long long extended_isa_sdk_hbm_scratch __asm__("_ZN12extended_isa3sdk11hbm_scratchE");

/* memory.c: its TCM pool; the tcm_malloc blocks it knows, forgotten at the kernel's return. */
extern unsigned char *const nt_device_tcm;
void nt_device_forget_blocks(void);
static nt_customop_meta metas[MAX_TENSORS];
static uint64_t hbm_base, hbm_bytes;
static uint32_t core, cores;

static struct {
    const char *name;
    nt_customop_invoker invoker;
    const void *function;
} kernels[MAX_KERNELS];
static uint32_t nkernels;

/* What the translate calls did, by window (the host model counts the same on the host). */
static uint64_t translations, hits[RECORDS], refills[RECORDS];
static const uint32_t window_regs[REUSABLE] = {NEURON_TRANSLATE_MEM_WINDOW3_LO, NEURON_TRANSLATE_MEM_WINDOW5_LO,
                                        NEURON_TRANSLATE_MEM_WINDOW6_LO};
/* What each reusable window's register showed last (low and high word). */
static uint32_t shown[REUSABLE][2];
/* The table, once _init_translate_ctx has run: the runtime's own uses of it do not call
 * neuron_translate_ctx, whose instructions count as the translation object's. */
static _translation_ctx_t *table;

/* The kernel's stack (docs/customop-device.md, "The stack"): the build's STACK_SIZE (from
 * ntx's glue), the stack pointer the kernel was called below (0: no kernel runs) and the
 * lowest stack pointer a request was made at. The kernel runs on qemu's stack, megabytes
 * deep, so frames past what the device gives land in memory nothing else uses. */
static uint32_t stack_limit = NT_CUSTOMOP_STACK_DEFAULT;
static uintptr_t stack_top, stack_low;
static int stack_reported;
/* Painted below the larger of the limit and a core's memory: how far past the frames went. */
#define STACK_ROOM 16384u
#define STACK_PAINT 0x5ac0ffeeu

/* support.c: a stack pointer just below the caller's frame; the stack painted. */
uintptr_t nt_device_sp(void);
uint32_t *nt_device_paint(uintptr_t top, uint32_t bytes, uint32_t pattern);

static int nt_device_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        ++a, ++b;
    return *a == *b;
}

/* The kernel's stack at a request it makes: its deepest point noted, and sent when past
 * a core's local memory (channel.c calls it, through nt_device_on_request). */
static void nt_device_stack_check(uintptr_t low, int at_least, int last);
static void nt_device_stack_at_request(void)
{
    if (stack_top) {
        uintptr_t sp = nt_device_sp();
        if (sp < stack_low)
            stack_low = sp;
        nt_device_stack_check(sp, 0, 0);
    }
}

/* A meta of a reply at r: kept in its handle's slot. */
static const nt_customop_meta *nt_device_meta_at(const unsigned char *r)
{
    nt_customop_meta m;
    nt_device_copy(&m, r, sizeof m);
    if (m.handle == 0)
        return NULL;
    if (m.handle > MAX_TENSORS)
        nt_device_exit(NT_DEVICE_EXIT_TOO_MANY_TENSORS);
    nt_device_copy(&metas[m.handle - 1], &m, sizeof m);
    return &metas[m.handle - 1];
}

static uint32_t nt_device_handle(const nt_customop_meta *m) { return m ? m->handle : 0; }
#define SITE_OF(p) ((uint32_t)(uintptr_t)(p))

static struct nt_device_operand nt_device_operand(const nt_customop_arg *a)
{
    struct nt_device_operand o;
    o.kind = a->kind;
    o.handle = a->kind == NT_CUSTOMOP_ARG_TENSOR ? nt_device_handle(a->meta) : 0;
    o.i = a->i;
    o.f = a->f;
    return o;
}

/* The runner reads the first ndim sizes (at most the protocol's array). */
const nt_customop_meta *nt_customop_tensor_new(int dtype, const int64_t *sizes, size_t ndim, int fill,
                                               const nt_customop_arg *value, const void *site)
{
    nt_customop_arg none = {NT_CUSTOMOP_ARG_NONE, NULL, 0, 0.0};
    struct nt_device_new_tensor q = {0};
    size_t room = sizeof q.sizes / sizeof q.sizes[0];
    q.dtype = dtype;
    q.fill = fill;
    q.ndim = (uint32_t)ndim;
    nt_device_copy(q.sizes, sizes, sizeof q.sizes[0] * (ndim < room ? ndim : room));
    q.value = nt_device_operand(value ? value : &none);
    q.site = SITE_OF(site);
    return nt_device_meta_at(NT_DEVICE_ASK(NT_DEVICE_NEW, q));
}

/* A request whose payload is one tensor's handle. */
static void nt_device_ask_of(const nt_customop_meta *m, uint32_t code)
{
    struct nt_device_handle q = {nt_device_handle(m)};
    NT_DEVICE_ASK(code, q);
}

void nt_customop_tensor_retain(const nt_customop_meta *m) { nt_device_ask_of(m, NT_DEVICE_RETAIN); }
void nt_customop_tensor_release(const nt_customop_meta *m) { nt_device_ask_of(m, NT_DEVICE_RELEASE); }

void nt_customop_tensor_fill(const nt_customop_meta *m, const nt_customop_arg *value)
{
    struct nt_device_fill q;
    q.handle = nt_device_handle(m);
    q.value = nt_device_operand(value);
    NT_DEVICE_ASK(NT_DEVICE_FILL, q);
}

const nt_customop_meta *nt_customop_apply(int op, const nt_customop_meta *out, const nt_customop_arg *args,
                                          const void *site)
{
    struct nt_device_apply q;
    q.op = op;
    q.out = nt_device_handle(out);
    for (int k = 0; k < 3; ++k)
        q.operands[k] = nt_device_operand(&args[k]);
    q.site = SITE_OF(site);
    return nt_device_meta_at(NT_DEVICE_ASK(NT_DEVICE_APPLY, q));
}

int nt_customop_policy(const nt_customop_meta *m, int set)
{
    struct nt_device_policy q = {nt_device_handle(m), set};
    struct nt_device_value32 r;
    nt_device_copy(&r, NT_DEVICE_ASK(NT_DEVICE_POLICY, q), sizeof r);
    return r.value;
}

uint8_t *nt_customop_open(const nt_customop_meta *m, int kind, int dtype, int ndim)
{
    struct nt_device_open q = {nt_device_handle(m), kind, dtype, ndim};
    struct nt_device_tcm_at r;
    const unsigned char *a = NT_DEVICE_ASK(NT_DEVICE_OPEN, q);
    nt_device_copy(&r, a, sizeof r);
    nt_device_meta_at(a + sizeof r);
    return r.at < 0 ? NULL : nt_device_tcm + r.at;
}

void nt_customop_close(const nt_customop_meta *m, int kind, uint8_t *buffer)
{
    struct nt_device_close q = {nt_device_handle(m), kind, buffer ? (int64_t)(buffer - nt_device_tcm) : -1};
    NT_DEVICE_ASK(NT_DEVICE_CLOSE, q);
}

void nt_customop_bad_index(const nt_customop_meta *m, int dim, int64_t index, int64_t size)
{
    struct nt_device_bad_index q = {nt_device_handle(m), dim, index, size};
    NT_DEVICE_ASK(NT_DEVICE_BAD_INDEX, q);
}

void nt_customop_bad_stream(const nt_customop_meta *m, int closed, int write, uint64_t index)
{
    struct nt_device_bad_stream q = {nt_device_handle(m), closed, write, index};
    NT_DEVICE_ASK(NT_DEVICE_BAD_STREAM, q);
}

void nt_customop_count_tcm(uint64_t in_bytes, uint64_t out_bytes)
{
    struct nt_device_count_tcm q = {in_bytes, out_bytes};
    NT_DEVICE_ASK(NT_DEVICE_COUNT_TCM, q);
}

void nt_customop_tcm_copy(const nt_customop_meta *m, int dtype, uint64_t offset, uint64_t count, int write,
                          const void *site)
{
    struct nt_device_tcm_copy q = {nt_device_handle(m), dtype, offset, count, write, SITE_OF(site)};
    NT_DEVICE_ASK(NT_DEVICE_TCM_COPY, q);
}

/* A speed-up of the host's page tables: nothing to do on the core. */
void nt_customop_prefault(const nt_customop_meta *m, uint64_t first, const uint8_t *p, int write,
                          nt_customop_filled *filled)
{
    (void)m, (void)first, (void)p, (void)write, (void)filled;
}

void nt_customop_note(const nt_customop_meta *m, uint64_t first, uint64_t count, int write)
{
    struct nt_device_note q = {nt_device_handle(m), first, count, write};
    nt_device_meta_at(NT_DEVICE_ASK(NT_DEVICE_NOTE, q));
}


/* --sanitize's TCM watch is the host's (docs/customop-device.md). */
void nt_customop_tcm_read_at(const void *p, size_t bytes, const void *site) { (void)p, (void)bytes, (void)site; }
/* Host-only (docs/customop-api.md, "Device parity"): the host runner warns of a build that
 * opted out of the device's compile. */
void nt_customop_parity_off(void) {}

const nt_customop_meta *nt_customop_dst_tensor(void)
{
    struct nt_device_site q = {SITE_OF(__builtin_return_address(0))};
    return nt_device_meta_at(NT_DEVICE_ASK(NT_DEVICE_DST, q));
}

/* The frames the HBM stack of the build's STACK_SIZE holds: its top aligned down, less
 * the saved context (docs/customop-device.md, "The stack"). */
static uintptr_t nt_device_switched_room(void)
{
    uint32_t top = stack_limit & ~(NT_CUSTOMOP_STACK_SWITCH_ALIGN - 1u);
    return top > NT_CUSTOMOP_STACK_SWITCH_CONTEXT ? top - NT_CUSTOMOP_STACK_SWITCH_CONTEXT : 0;
}

/* Sends the kernel's depth once a call, its deepest address seen being `low`, when past the
 * switched stack: at the kernel's return (`last`), or at a request once past a core's local
 * memory as well. The runner says what the device does with it. */
static void nt_device_stack_check(uintptr_t low, int at_least, int last)
{
    uintptr_t depth = stack_top - low;
    if (stack_reported || depth <= nt_device_switched_room())
        return;
    if (!last && depth <= NT_CUSTOMOP_CORE_DRAM)
        return;
    stack_reported = 1;
    struct nt_device_stack q = {stack_limit, (uint64_t)depth, (uint32_t)at_least};
    nt_device_start(); /* not begin: this is the stack's watch's own request */
    nt_device_put(&q, sizeof q);
    nt_device_ask(NT_DEVICE_STACK);
}

void nt_customop_stack_size(uint32_t bytes)
{
    if (bytes == 0 || bytes > NT_CUSTOMOP_STACK_MAX)
        nt_device_exit(NT_DEVICE_EXIT_BAD_STACK_SIZE);
    stack_limit = bytes;
}

/* The kernel, called with its stack watched: painted first, read after it returns. */
static const nt_customop_meta *nt_device_call(nt_customop_invoker invoker, const void *function,
                                              const nt_customop_arg *a)
{
    const nt_customop_meta *out;
    uint32_t *at, *p;
    nt_device_on_request = nt_device_stack_at_request;
    stack_top = nt_device_sp();
    stack_low = stack_top;
    /* Past a core's local memory the device faults whatever its room: painted so far. */
    at = nt_device_paint(stack_top,
                         (stack_limit > NT_CUSTOMOP_CORE_DRAM ? stack_limit : NT_CUSTOMOP_CORE_DRAM) +
                             STACK_ROOM,
                         STACK_PAINT);
    out = invoker(function, a);
    for (p = at; p < (uint32_t *)(stack_top - 256) && *p == STACK_PAINT; ++p)
        ;
    if ((uintptr_t)p < stack_low)
        stack_low = (uintptr_t)p;
    nt_device_stack_check(stack_low, stack_low <= (uintptr_t)at, 1);
    stack_top = 0;
    return out;
}

uint32_t nt_customop_cpu_id(void) { return core; }
uint32_t nt_customop_cpu_count(void) { return cores; }

void *nt_customop_ctx(uint32_t h) { return h == 1 ? table : NULL; }

/* Shape functions run on the host: the registry is not the device's. */
void nt_customop_register(const char *lib, const char *name, const char *kernel, nt_customop_invoker invoker,
                          const void *function, const int *params, size_t n)
{
    (void)lib, (void)name, (void)kernel, (void)invoker, (void)function, (void)params, (void)n;
}

void nt_customop_bind(const char *name, nt_customop_invoker invoker, const void *function, const int *params,
                      size_t n)
{
    (void)params, (void)n;
    if (nkernels < MAX_KERNELS) {
        kernels[nkernels].name = name;
        kernels[nkernels].invoker = invoker;
        kernels[nkernels].function = function;
        ++nkernels;
    }
}

/* Built without exceptions: nothing throws. */
/* What the device lacks is a host run's warning: on the device the link itself says it. */
void nt_customop_device_lacks(const char *const *names, size_t n)
{
    (void)names;
    (void)n;
}

void nt_customop_thrown(const char *what) { (void)what; }

/* The runner API is the host's. */
int nt_customop_run(const char *op, const nt_customop_arg *args, size_t n, uint32_t c, int stats,
                    const nt_customop_meta **out)
{
    (void)op, (void)args, (void)n, (void)c, (void)stats, (void)out;
    return -1;
}
const nt_customop_meta *nt_customop_load_npy(const char *path) { return (void)path, NULL; }
int nt_customop_save_npy(const nt_customop_meta *m, const char *path) { return (void)m, (void)path, -1; }
int nt_customop_bytes(const nt_customop_meta *m, uint8_t *data, size_t bytes, int write)
{
    return (void)m, (void)data, (void)bytes, (void)write, -1;
}

/* Shows SoC address `soc` (or nothing: ~0) in the window at local `at` of `size` bytes:
 * the HBM there, shared with the runner, or memory of its own (readable and writable if
 * `writable`, else inaccessible) where qemu cannot show HBM. */
static void nt_device_show(uint32_t at, uint64_t size, uint64_t soc, int writable)
{
    long r;
    /* qemu's file offsets end at 4 GiB (the runner keeps tensors below: docs). */
    if (soc >= hbm_base && soc - hbm_base + size <= hbm_bytes && soc - hbm_base + size <= (1ull << 32))
        r = nt_device_sys(SYS_MMAP2, (long)at, (long)size, PROT_RW, MAP_SHARED_FIXED, NT_DEVICE_FD_HBM,
                (long)((soc - hbm_base) >> 12));
    else
        r = nt_device_sys(SYS_MMAP2, (long)at, (long)size, writable ? PROT_RW : 0, MAP_PRIVATE_ANON_FIXED, -1, 0);
    if (r != (long)at)
        nt_device_exit(NT_DEVICE_EXIT_MAP_FAILED);
}

/* Window k's register words, low and high. */
#define WINDOW_REG(k, word) NXREG(window_regs[k] + 4 * (word))

/* Each window's local start and size (records' `window` and mask), kept from the table:
 * read again only when a window moved; and the window the last call landed in. */
static uint32_t window_at[RECORDS], window_size[RECORDS];
static unsigned last_window;

static void nt_device_note_window(unsigned k)
{
    window_at[k] = table->records[k].window;
    window_size[k] = (uint32_t)(~table->records[k].mask + 1);
}

/* The hardware's side of a translate call: each reusable window whose register changed
 * shows its new region; the call counted by the window its result is in (the windows are
 * apart in local memory, so at most one holds it: the last one's is tried first). */
static void nt_device_moved(const void *p)
{
    uint32_t a = (uint32_t)(uintptr_t)p;
    int refilled = -1;
    unsigned k;
    ++translations;
    for (k = 0; k < REUSABLE; ++k) {
        uint32_t lo = WINDOW_REG(k, 0), hi = WINDOW_REG(k, 1);
        if (lo != shown[k][0] || hi != shown[k][1]) {
            nt_device_note_window(k);
            nt_device_show(window_at[k], window_size[k], ((uint64_t)hi << 32) | lo, 0);
            shown[k][0] = lo;
            shown[k][1] = hi;
            refilled = (int)k;
        }
    }
    k = last_window;
    if (a - window_at[k] >= window_size[k])
        for (k = 0; k < RECORDS && a - window_at[k] >= window_size[k]; ++k)
            ;
    if (k == RECORDS)
        return;
    last_window = k;
    if ((int)k == refilled)
        ++refills[k];
    else
        ++hits[k];
}

void *__real_neuron_translate_span(void *ctx, unsigned long long addr, unsigned long long len,
                                   unsigned long long *out_span);
void *__real__Z16neuron_translatePvy(void *ctx, unsigned long long addr);

void *__wrap_neuron_translate_span(void *ctx, unsigned long long addr, unsigned long long len,
                                   unsigned long long *out_span)
{
    void *p = __real_neuron_translate_span(ctx, addr, len, out_span);
    nt_device_moved(p);
    return p;
}

void *__wrap__Z16neuron_translatePvy(void *ctx, unsigned long long addr)
{
    void *p = __real__Z16neuron_translatePvy(ctx, addr);
    nt_device_moved(p);
    return p;
}

static const unsigned char *nt_device_get(const unsigned char *r, void *v, uint32_t n)
{
    nt_device_copy(v, r, n);
    return r + n;
}

/* The call's start: the core, the model's layout; the kernel's name (into name, of room
 * bytes) and its arguments (into args, of room). */
static const unsigned char *nt_device_started(uint64_t *engine, char *name, uint32_t name_room)
{
    struct nt_device_started a;
    const unsigned char *r;
    nt_device_begin();
    r = nt_device_get(nt_device_ask(NT_DEVICE_START), &a, sizeof a);
    core = a.core, cores = a.cores, *engine = a.engine_base;
    extended_isa_sdk_hbm_scratch = a.hbm_scratch, hbm_base = a.hbm_base, hbm_bytes = a.hbm_bytes;
    if (a.name_bytes >= name_room)
        nt_device_exit(NT_DEVICE_EXIT_NAME_TOO_LONG);
    r = nt_device_get(r, name, a.name_bytes);
    name[a.name_bytes] = 0;
    return r;
}

int nt_customop_main(int argc, const char *const *argv)
{
    uint64_t engine;
    uint32_t nargs;
    static struct nt_device_return ret;
    char name[256];
    static nt_customop_arg args[64];
    const unsigned char *r;
    const nt_customop_meta *out;
    (void)argc, (void)argv;
    r = nt_device_started(&engine, name, sizeof name);
    r = nt_device_get(r, &nargs, sizeof nargs);
    if (nargs > 64)
        nt_device_exit(NT_DEVICE_EXIT_TOO_MANY_ARGUMENTS);
    for (uint32_t k = 0; k < nargs; ++k) {
        struct nt_device_operand o;
        r = nt_device_get(r, &o, sizeof o);
        args[k].kind = o.kind;
        args[k].i = o.i;
        args[k].f = o.f;
        args[k].meta = NULL;
        if (o.kind == NT_CUSTOMOP_ARG_TENSOR) {
            args[k].meta = nt_device_meta_at(r);
            r += sizeof(nt_customop_meta);
        }
    }
    NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO) = (uint32_t)engine;
    NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI) = (uint32_t)(engine >> 32);
    _init_translate_ctx();
    table = neuron_translate_ctx();
    {
        /* qemu-user gives an Xtensa program the addresses below 1 GiB only: the pinned
         * windows (NX 0x8000_0000 and up on the core) move to PINNED_AT there. */
        _translation_ctx_t *t = table;
        for (unsigned k = REUSABLE; k < RECORDS; ++k)
            t->records[k].window = PINNED_AT + (k - REUSABLE) * (uint32_t)(~t->records[k].mask + 1);
        for (unsigned k = 0; k < RECORDS; ++k)
            nt_device_show(t->records[k].window, ~t->records[k].mask + 1, k < REUSABLE ? ~0ull : t->records[k].ptr, 1);
        for (unsigned k = 0; k < REUSABLE; ++k)
            shown[k][0] = WINDOW_REG(k, 0), shown[k][1] = WINDOW_REG(k, 1);
        for (unsigned k = 0; k < RECORDS; ++k)
            nt_device_note_window(k);
    }
    out = NULL;
    for (uint32_t k = 0; k < nkernels; ++k)
        if (nt_device_streq(kernels[k].name, name)) {
            out = nt_device_call(kernels[k].invoker, kernels[k].function, args);
            break;
        }
    nt_device_forget_blocks();
    ret.handle = nt_device_handle(out);
    ret.translations = translations;
    nt_device_copy(ret.hits, hits, sizeof hits);
    nt_device_copy(ret.refills, refills, sizeof refills);
    NT_DEVICE_ASK(NT_DEVICE_RETURN, ret);
    return 0;
}
