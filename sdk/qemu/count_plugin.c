/*
 * A qemu TCG plugin that counts the emulated Q7's instructions for `ntx op run --device`
 * (sdk/runtime/src/run/device/count.rs reads what it writes): each translation block gets an
 * inline counter of its executions (qemu adds to it in the generated code, chaining left
 * on), and at exit the plugin writes one line per block, "start instructions executions"
 * in hexadecimal and decimal, to the descriptor its `fd=N` argument names.
 *
 * With `profile=1` (`ntx op run --device --profile DIR`) it also follows the calls: each
 * block's execution calls back here, a block ending in a call (CALL0/4/8/12, CALLX0/4/8/12)
 * makes the next block's start a child of the current node of a call tree, a block ending
 * in a return (RET, RETW, RET.N, RETW.N) goes back to the parent. It then also writes, per
 * block, "b id start n addr..." (its instructions' addresses), per tree node "n id parent
 * entry", and per (node, block) "p node block executions"; the runner
 * (sdk/runtime/src/run/device/profile.rs) turns them into lines, functions and stacks.
 * `aside=LO-HI` names code entered without a call (count_profile.h).
 *
 * With `watch=FD,tcm=LO-HI` it also watches the program's stores into the TCM pool
 * (tcm_watch.h): one outside every live block ends the program there.
 *
 * Written against qemu's documented plugin API as qemu-user 7.2 exports it (API version 1):
 * the few functions used are declared here, as that qemu ships no header for them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One translation of a block: where it starts, its instructions, its executions. The
 * records live in chunks that never move (qemu's generated code holds their addresses). */
struct block {
    uint64_t start;
    uint64_t insns;
    uint64_t executions;
    /* profile=1 only: its number, how it ends, its instructions' addresses, and the last
     * call-tree node it ran at with that pair's slot (most runs repeat the pair). */
    uint32_t id;
    int ends;
    uint64_t *addrs;
    uint32_t last_node, last_slot;
};
#define CHUNK 4096
struct chunk {
    struct chunk *next;
    size_t used;
    struct block blocks[CHUNK];
};
static struct chunk *chunks;
static int out_fd = -1;
static int failed;
static int profile;
static uint32_t blocks;

static void put(const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(out_fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

#include "count_profile.h"
#include "tcm_watch.h"

static struct block *new_block(void)
{
    if (!chunks || chunks->used == CHUNK) {
        struct chunk *c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        c->next = chunks;
        chunks = c;
    }
    return &chunks->blocks[chunks->used++];
}

static void on_translation(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    struct block *b = new_block();
    (void)id;
    if (!b) {
        failed = 1;
        return;
    }
    b->start = qemu_plugin_tb_vaddr(tb);
    b->insns = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->executions, 1);
    if (profile && !profile_block(tb, b))
        failed = 1;
    if (zone_live)
        watch_stores(tb);
}

static void on_exit_write(qemu_plugin_id_t id, void *userdata)
{
    char line[80];
    (void)id, (void)userdata;
    if (failed)
        put("failed\n", 7);
    for (struct chunk *c = chunks; c; c = c->next)
        for (size_t k = 0; k < c->used; ++k) {
            const struct block *b = &c->blocks[k];
            if (!b->executions)
                continue;
            int n = snprintf(line, sizeof line, "%llx %llu %llu\n", (unsigned long long)b->start,
                             (unsigned long long)b->insns, (unsigned long long)b->executions);
            put(line, (size_t)n);
        }
    if (profile)
        profile_write();
    put("end\n", 4);
    close(out_fd);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv)
{
    (void)info;
    for (int k = 0; k < argc; ++k)
        if (watch_arg(argv[k]) < 0) {
            fprintf(stderr, "count_plugin: give tcm=LO-HI in hexadecimal, not %s\n", argv[k] + 4);
            return -1;
        } else if (strncmp(argv[k], "fd=", 3) == 0)
            out_fd = atoi(argv[k] + 3);
        else if (strcmp(argv[k], "profile=1") == 0)
            profile = 1;
        else if (strncmp(argv[k], "aside=", 6) == 0 &&
                 sscanf(argv[k] + 6, "%llx-%llx", (unsigned long long *)&aside_lo, (unsigned long long *)&aside_hi) != 2) {
            fprintf(stderr, "count_plugin: give aside=LO-HI in hexadecimal, not %s\n", argv[k] + 6);
            return -1;
        }
    if (out_fd < 0) {
        fprintf(stderr, "count_plugin: give fd=N, the descriptor to write the counts to\n");
        return -1;
    }
    if (!watch_start(id)) {
        fprintf(stderr, "count_plugin: the store watch needs watch=FD and tcm=LO-HI, and its memory\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translation);
    qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
    return 0;
}
