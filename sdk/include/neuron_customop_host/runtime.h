/*
 * The C ABI of the custom-op SDK's runtime (sdk/runtime, Rust): what the C++ headers call.
 * Not for kernels: they use <torch/torch.h>. A tensor crosses as a pointer to its
 * nt_customop_meta, which the runtime owns and keeps in place while the tensor lives.
 * abi-tests/tests/sdk_abi.rs checks these declarations against the runtime's.
 */
#ifndef NEURON_CUSTOMOP_HOST_RUNTIME_H
#define NEURON_CUSTOMOP_HOST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What C++ reads of a tensor without a call (the runtime's state::Meta). */
typedef struct nt_customop_meta {
    uint64_t hbm_addr; /* SoC address of element 0 (0: a shape function's data-less input) */
    uint64_t numel;
    int64_t sizes[8];
    int64_t strides[8]; /* elements, C order */
    uint32_t ndim;
    int32_t dtype; /* c10::ScalarType */
    uint32_t handle;
    uint32_t data_less;
    uint32_t track; /* 1: tell the runtime of each TCM and stream copy (nt_customop_note) */
    uint32_t pad;
} nt_customop_meta;

/* A core's stack on the device: about 8 KB unless the build says -DSTACK_SIZE=N, at most
 * 400 KB (the vendor's developer guide; taken as KiB). bind.hpp refuses more at compile
 * time; sdk/runtime/src/base/limits.rs holds the same values (a test compares them). */
#define NT_CUSTOMOP_STACK_DEFAULT 8192
#define NT_CUSTOMOP_STACK_MAX 409600

/** What an nt_customop_arg holds. */
enum {
    NT_CUSTOMOP_ARG_NONE = 0,
    NT_CUSTOMOP_ARG_TENSOR = 1,       /* meta */
    NT_CUSTOMOP_ARG_INT = 2,          /* i: an int64_t parameter */
    NT_CUSTOMOP_ARG_DOUBLE = 3,       /* f: a double parameter */
    NT_CUSTOMOP_ARG_SCALAR_INT = 4,   /* i: an integral Scalar */
    NT_CUSTOMOP_ARG_SCALAR_FLOAT = 5, /* f: a floating-point Scalar */
};

/** An argument or operand (kind: one of NT_CUSTOMOP_ARG_*). */
typedef struct nt_customop_arg {
    int32_t kind;
    const nt_customop_meta *meta;
    int64_t i;
    double f;
} nt_customop_arg;

/** Calls a registered C++ function with its arguments; returns the tensor it returned
 *  (one reference). */
typedef const nt_customop_meta *(*nt_customop_invoker)(const void *function, const nt_customop_arg *args);

/* Tensors (fill: 0 none, 1 zeros, 2 ones, 3 value, 4 identity). */
const nt_customop_meta *nt_customop_tensor_new(int dtype, const int64_t *sizes, size_t ndim, int fill,
                                               const nt_customop_arg *value);
void nt_customop_tensor_retain(const nt_customop_meta *m);
void nt_customop_tensor_release(const nt_customop_meta *m);
void nt_customop_tensor_fill(const nt_customop_meta *m, const nt_customop_arg *value);
const nt_customop_meta *nt_customop_apply(int op, const nt_customop_meta *out, const nt_customop_arg *args);
/* Sets the coherence policy if set is 0..2; returns it. */
int nt_customop_policy(const nt_customop_meta *m, int set);

/* Accessors (kind 0 standard, 1 read stream, 2 write stream, 3 TCM). */
uint8_t *nt_customop_open(const nt_customop_meta *m, int kind, int dtype, int ndim);
void nt_customop_close(const nt_customop_meta *m, int kind, uint8_t *buffer);
void nt_customop_bad_index(const nt_customop_meta *m, int dim, int64_t index, int64_t size);
void nt_customop_bad_stream(const nt_customop_meta *m, int closed, int write, uint64_t index);
void nt_customop_count_tcm(uint64_t in_bytes, uint64_t out_bytes);
void nt_customop_tcm_copy(const nt_customop_meta *m, int dtype, uint64_t offset, uint64_t count, int write);
/* A window view whose page tables the runtime filled: local [lo, hi) showing SoC from soc. */
typedef struct nt_customop_filled {
    uint64_t lo;
    uint64_t hi;
    uint64_t soc;
} nt_customop_filled;
/* Before a copy of the stretch at local p (element first): fill the window view's page
 * tables for the rest of the tensor there; *filled says which. */
void nt_customop_prefault(const nt_customop_meta *m, uint64_t first, const uint8_t *p, int write,
                          nt_customop_filled *filled);
void *nt_customop_tcm_malloc(size_t bytes);
/* A TCM or stream copy of elements [first, first + count) of a tracked tensor (write: into
 * it); a read of elements nothing wrote stops the core (uninitialized-read). */
void nt_customop_note(const nt_customop_meta *m, uint64_t first, uint64_t count, int write);
/* The same, from the call at return address site (a leak is reported with its place). */
void *nt_customop_tcm_malloc_at(size_t bytes, const void *site);
void nt_customop_tcm_free(void *p);
/* Before a tcm_to_tensor of the bytes at p, from the call at return address site: under
 * --sanitize, bytes of a tcm_malloc block that nothing wrote stop the core (uninitialized-read). */
void nt_customop_tcm_read_at(const void *p, size_t bytes, const void *site);

/* Cores and the op's output. */
const nt_customop_meta *nt_customop_dst_tensor(void);
uint32_t nt_customop_cpu_id(void);
uint32_t nt_customop_cpu_count(void);
void *nt_customop_ctx(uint32_t handle);

/* The registry and the runner. */
void nt_customop_register(const char *lib, const char *name, const char *kernel, nt_customop_invoker invoker,
                          const void *function, const int *params, size_t n);
void nt_customop_bind(const char *name, nt_customop_invoker invoker, const void *function, const int *params,
                      size_t n);
int nt_customop_main(int argc, char **argv);
/* The C functions the kernels call that the device runtime lacks (ntx's glue tells them):
 * each run warns of them (device-lacks). */
void nt_customop_device_lacks(const char *const *names, size_t n);
/* The stack the build gives a core (-DSTACK_SIZE, or NT_CUSTOMOP_STACK_DEFAULT): each
 * run reports a kernel deeper than that (stack-overflow on the device, stack-overflow-host
 * where the host sees it). */
void nt_customop_stack_size(uint32_t bytes);
/* A C++ exception left a kernel or shape function: what() (NULL: not a std::exception). */
void nt_customop_thrown(const char *what);

/* The runner API (runner.hpp). stats: 0 none, 1 text, 2 JSON. */
int nt_customop_run(const char *op, const nt_customop_arg *args, size_t n, uint32_t cores, int stats,
                    const nt_customop_meta **out);
const nt_customop_meta *nt_customop_load_npy(const char *path);
int nt_customop_save_npy(const nt_customop_meta *m, const char *path);
/* All of a tensor's bytes out (write 0) or in (write 1); -1 if bytes is not its size. */
int nt_customop_bytes(const nt_customop_meta *m, uint8_t *data, size_t bytes, int write);

#ifdef __cplusplus
}
#endif

#endif /* NEURON_CUSTOMOP_HOST_RUNTIME_H */
