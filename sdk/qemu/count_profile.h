/*
 * count_plugin.c's `profile=1`: the call tree the blocks run in, and each block's
 * executions at each node. Included once, by count_plugin.c (it uses its block records,
 * `put` and `blocks`). One vCPU per qemu-user process here (a core is a process), so the
 * current node is plain state.
 */

/* How a block ends, from its last instruction's bytes (little-endian Xtensa). */
enum { ENDS_OTHER = 0, ENDS_CALL = 1, ENDS_RETURN = 2 };

/* RRR instructions are bytes (t << 4 | op0), (r << 4 | s), (op2 << 4 | op1). */
static int ends_of(const uint8_t *b, size_t n)
{
    if (n == 3 && (b[0] & 0x0f) == 0x05)
        return ENDS_CALL; /* CALL0/4/8/12: op0 = 5 */
    if (n == 3 && (b[0] & 0x0f) == 0 && b[2] == 0 && (b[1] & 0xf0) == 0) {
        if ((b[0] & 0xc0) == 0xc0)
            return ENDS_CALL; /* CALLX0/4/8/12: t = 11nn, s the target's register */
        if ((b[0] == 0x80 || b[0] == 0x90) && b[1] == 0)
            return ENDS_RETURN; /* RET (t = 1000), RETW (t = 1001) */
    }
    if (n == 2 && b[1] == 0xf0 && (b[0] == 0x0d || b[0] == 0x1d))
        return ENDS_RETURN; /* RET.N, RETW.N */
    return ENDS_OTHER;
}

/* The call tree: node 0 is the root (before any call); a child per (parent, call site),
 * so that what a call costs is known by the line it is on. The entry is the callee the
 * site first called (a CALLX site that calls several functions is one node, named by the
 * first; the stacks name the function each block is in). */
struct node {
    uint32_t parent;
    uint64_t entry, site;
};
static struct node *nodes;
static uint32_t n_nodes, cap_nodes;

/* (node, block) pairs and their executions. */
struct pair {
    uint32_t node, block;
    uint64_t executions;
};
static struct pair *pairs;
static uint32_t n_pairs, cap_pairs;

/* Open-addressing indexes: a key's slot holds the index + 1 of its node or pair (0 empty). */
struct index {
    uint64_t *keys;
    uint32_t *values;
    uint32_t size, used;
};
static struct index child_index, pair_index;

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int index_grow(struct index *x)
{
    uint32_t size = x->size ? x->size * 2 : 1024;
    uint64_t *keys = calloc(size, sizeof *keys);
    uint32_t *values = calloc(size, sizeof *values);
    if (!keys || !values) {
        free(keys), free(values);
        return 0;
    }
    for (uint32_t k = 0; k < x->size; ++k)
        if (x->values[k]) {
            uint32_t at = (uint32_t)mix(x->keys[k]) & (size - 1);
            while (values[at])
                at = (at + 1) & (size - 1);
            keys[at] = x->keys[k], values[at] = x->values[k];
        }
    free(x->keys), free(x->values);
    x->keys = keys, x->values = values, x->size = size;
    return 1;
}

/* The value of `key` in `x`, or 0; with `add` (non-zero), `add` is stored if it is
 * absent (0 when there is no room). */
static uint32_t index_find(struct index *x, uint64_t key, uint32_t add)
{
    if (add && (x->used + 1) * 2 > x->size && !index_grow(x))
        return 0;
    if (!x->size)
        return 0;
    uint32_t at = (uint32_t)mix(key) & (x->size - 1);
    while (x->values[at]) {
        if (x->keys[at] == key)
            return x->values[at];
        at = (at + 1) & (x->size - 1);
    }
    if (!add)
        return 0;
    x->keys[at] = key, x->values[at] = add, x->used++;
    return add;
}

static int grow(void **p, uint32_t *cap, size_t each)
{
    uint32_t want = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, (size_t)want * each);
    if (!q)
        return 0;
    *p = q, *cap = want;
    return 1;
}

/* The child of `parent` called from `site`, entered at `entry` (made on first use);
 * `parent` when out of room. Xtensa addresses are 32 bits: the key holds both. */
static uint32_t child_of(uint32_t parent, uint64_t entry, uint64_t site)
{
    uint64_t key = (uint64_t)parent << 32 ^ (site & 0xffffffffu);
    uint32_t found = index_find(&child_index, key, 0);
    if (found)
        return found - 1;
    if (n_nodes == cap_nodes && !grow((void **)&nodes, &cap_nodes, sizeof *nodes))
        return failed = 1, parent;
    if (!index_find(&child_index, key, n_nodes + 1))
        return failed = 1, parent;
    nodes[n_nodes] = (struct node){parent, entry, site};
    return n_nodes++;
}

static uint32_t current, pending, too_deep, depth;
static struct block *last_block;
#define MAX_DEPTH 256
/* `aside=LO-HI` (hexadecimal): code that runs between two of the kernel's blocks without
 * being called (the device runtime's SIGILL handler and its return, sdk/device/mulhigh.S):
 * its blocks count at the current node and leave the tree and the last block as they were. */
static uint64_t aside_lo, aside_hi;

/* One execution of block `b` at tree node `node`. */
static void count_at(struct block *b, uint32_t node)
{
    if (b->last_slot && b->last_node == node) {
        pairs[b->last_slot - 1].executions++;
        return;
    }
    uint64_t key = (uint64_t)node << 32 ^ b->id;
    uint32_t slot = index_find(&pair_index, key, 0);
    if (!slot) {
        if (n_pairs == cap_pairs && !grow((void **)&pairs, &cap_pairs, sizeof *pairs)) {
            failed = 1;
            return;
        }
        slot = index_find(&pair_index, key, n_pairs + 1);
        if (!slot) {
            failed = 1;
            return;
        }
        pairs[n_pairs++] = (struct pair){node, b->id, 0};
    }
    pairs[slot - 1].executions++;
    b->last_node = node, b->last_slot = slot;
}

static void on_block(unsigned int vcpu, void *userdata)
{
    struct block *b = userdata;
    (void)vcpu;
    if (b->start >= aside_lo && b->start < aside_hi) {
        count_at(b, current);
        return;
    }
    /* A block after one that ends in a call or a return, starting at one of that block's
     * instructions, is a restart: a window overflow at the callee's ENTRY, an underflow at
     * RETW, or the alloca exception of a MOVSP before a RETW (the callee's frame popped
     * while the caller's window is spilled) stops the block, and qemu runs from the
     * stopped instruction again once the registers are spilled or filled. The tree stays
     * where it is. (Taken for a restart too, and so misplacing the stacks after it: a
     * function whose first block calls itself, and a recursive call followed at once by a
     * return. The counts and lines do not depend on the tree.) */
    const struct block *l = last_block;
    int restarted = 0;
    for (uint64_t k = 0; l && l->ends != ENDS_OTHER && k < l->insns && !restarted; ++k)
        restarted = b->start == l->addrs[k];
    last_block = b;
    if (restarted) {
    } else if (pending == ENDS_CALL) {
        if (depth < MAX_DEPTH)
            current = child_of(current, b->start, l->addrs[l->insns - 1]), depth++;
        else
            too_deep++;
    } else if (pending == ENDS_RETURN) {
        if (too_deep)
            too_deep--;
        else if (depth)
            current = nodes[current].parent, depth--;
    }
    pending = (uint32_t)b->ends;
    count_at(b, current);
}

/* A block's profile record: its number, how it ends, its instructions' addresses. */
static int profile_block(struct qemu_plugin_tb *tb, struct block *b)
{
    if (!nodes && !grow((void **)&nodes, &cap_nodes, sizeof *nodes))
        return 0;
    if (!n_nodes)
        nodes[n_nodes++] = (struct node){0, 0, 0};
    b->id = blocks++;
    b->addrs = calloc(b->insns ? b->insns : 1, sizeof *b->addrs);
    if (!b->addrs)
        return 0;
    for (size_t k = 0; k < b->insns; ++k) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
        b->addrs[k] = qemu_plugin_insn_vaddr(insn);
        if (k + 1 == b->insns)
            b->ends = ends_of(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
    return 1;
}

/* The blocks that ran, the tree's nodes and the (node, block) pairs, as lines. */
static void profile_write(void)
{
    char line[64];
    for (struct chunk *c = chunks; c; c = c->next)
        for (size_t k = 0; k < c->used; ++k) {
            const struct block *b = &c->blocks[k];
            if (!b->executions || !b->addrs)
                continue;
            int n = snprintf(line, sizeof line, "b %u %llx %llu", b->id, (unsigned long long)b->start,
                             (unsigned long long)b->insns);
            put(line, (size_t)n);
            for (uint64_t i = 0; i < b->insns; ++i) {
                n = snprintf(line, sizeof line, " %llx", (unsigned long long)b->addrs[i]);
                put(line, (size_t)n);
            }
            put("\n", 1);
        }
    for (uint32_t k = 1; k < n_nodes; ++k) {
        int n = snprintf(line, sizeof line, "n %u %u %llx %llx\n", k, nodes[k].parent,
                         (unsigned long long)nodes[k].entry, (unsigned long long)nodes[k].site);
        put(line, (size_t)n);
    }
    for (uint32_t k = 0; k < n_pairs; ++k) {
        int n = snprintf(line, sizeof line, "p %u %u %llu\n", pairs[k].node, pairs[k].block,
                         (unsigned long long)pairs[k].executions);
        put(line, (size_t)n);
    }
}
