/*
 * The count plugin's store watch of the TCM pool (`watch=FD,tcm=LO-HI`; the runner's half:
 * sdk/runtime/src/run/device/watch.rs). LO-HI is the pool's zone in the program (the pool
 * between two red zones, sdk/device/memory.c's nt_device_tcm_zone); FD a pipe on which the
 * runner writes the pool's live blocks after each request that changed them (u32 count,
 * then per block u32 offset in the zone and u32 bytes; one write each, under PIPE_BUF). The
 * runner writes them before its answer, and they are read here when a system call of the
 * program returns (its read of the answer among them), so the blocks here are the pool's
 * at every store. A store that lands in the zone outside every live block's bytes ends the
 * program at once: the plugin writes "s PC ADDRESS BYTES" (the store instruction, its
 * first byte, hexadecimal, and its size), its counts so far and "end", and exits. Included
 * by count_plugin.c, after put(), its declarations of qemu's API and on_exit_write's.
 */
#include <fcntl.h>

enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_W = 2 };
typedef uint32_t qemu_plugin_meminfo_t;
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                                          void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_ret_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_idx, int64_t num,
                                                  int64_t ret);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_vcpu_syscall_ret_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_ret_cb_t cb);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);

static void on_exit_write(qemu_plugin_id_t id, void *userdata);

static int watch_fd = -1;
static uint64_t zone_lo, zone_hi;
/* Per byte of the zone: whether a live block holds it. */
static unsigned char *zone_live;
/* The runner's messages as they came (a message may arrive in pieces past PIPE_BUF's
 * promise only if the runner broke it; kept whole here either way). */
static unsigned char inbox[1 << 14];
static size_t inbox_len;

/* The zone's live bytes from the message at m (n bytes, whole): 0 if it does not read. */
static int take_blocks(const unsigned char *m, size_t n)
{
    uint32_t count, at, bytes;
    memcpy(&count, m, 4);
    if (n != 4 + (size_t)count * 8)
        return 0;
    memset(zone_live, 0, (size_t)(zone_hi - zone_lo));
    for (uint32_t k = 0; k < count; ++k) {
        memcpy(&at, m + 4 + 8 * k, 4);
        memcpy(&bytes, m + 8 + 8 * k, 4);
        if (at > zone_hi - zone_lo || bytes > zone_hi - zone_lo - at)
            return 0;
        memset(zone_live + at, 1, bytes);
    }
    return 1;
}

/* Reads what the runner wrote since, and takes each whole message in turn. */
static void on_syscall_return(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret)
{
    (void)id, (void)vcpu, (void)num, (void)ret;
    for (;;) {
        ssize_t got = read(watch_fd, inbox + inbox_len, sizeof inbox - inbox_len);
        if (got <= 0)
            break;
        inbox_len += (size_t)got;
        while (inbox_len >= 4) {
            uint32_t count;
            memcpy(&count, inbox, 4);
            size_t whole = 4 + (size_t)count * 8;
            if (whole > sizeof inbox) {
                failed = 1;
                inbox_len = 0;
                break;
            }
            if (inbox_len < whole)
                break;
            if (!take_blocks(inbox, whole))
                failed = 1;
            memmove(inbox, inbox + whole, inbox_len - whole);
            inbox_len -= whole;
        }
    }
}

/* A store of (1 << size_shift) bytes at vaddr by the instruction at userdata. */
static void on_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata)
{
    uint64_t n = 1ull << qemu_plugin_mem_size_shift(info);
    (void)vcpu;
    if (vaddr >= zone_hi || vaddr + n <= zone_lo)
        return;
    for (uint64_t a = vaddr < zone_lo ? zone_lo : vaddr; a < vaddr + n && a < zone_hi; ++a)
        if (!zone_live[a - zone_lo]) {
            char line[80];
            int len = snprintf(line, sizeof line, "s %llx %llx %llu\n", (unsigned long long)(uintptr_t)userdata,
                               (unsigned long long)vaddr, (unsigned long long)n);
            put(line, (size_t)len);
            on_exit_write(0, NULL);
            _exit(0);
        }
}

/* At a translation: each instruction's stores watched, with its address. */
static void watch_stores(struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t k = 0; k < n; ++k) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
        qemu_plugin_register_vcpu_mem_cb(insn, on_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
                                         (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn));
    }
}

/* The watch's arguments read: 1 if `arg` was one, -1 if it was one that does not read. */
static int watch_arg(const char *arg)
{
    if (strncmp(arg, "watch=", 6) == 0) {
        watch_fd = atoi(arg + 6);
        return 1;
    }
    if (strncmp(arg, "tcm=", 4) == 0) {
        unsigned long long lo, hi;
        if (sscanf(arg + 4, "%llx-%llx", &lo, &hi) != 2 || hi <= lo || hi - lo > (1u << 20))
            return -1;
        zone_lo = lo, zone_hi = hi;
        return 1;
    }
    return 0;
}

/* The watch started, if asked for (both arguments): 0 if it cannot be. */
static int watch_start(qemu_plugin_id_t id)
{
    if (watch_fd < 0 && !zone_hi)
        return 1;
    if (watch_fd < 0 || !zone_hi || !(zone_live = calloc(1, (size_t)(zone_hi - zone_lo))))
        return 0;
    if (fcntl(watch_fd, F_SETFL, fcntl(watch_fd, F_GETFL) | O_NONBLOCK) < 0)
        return 0;
    qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_return);
    return 1;
}
