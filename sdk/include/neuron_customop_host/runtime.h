/*
 * The C ABI of the custom-op SDK's runtime (sdk/runtime, Rust): what the C++ headers call.
 * Not for kernels: they use <torch/torch.h>. A tensor crosses as a pointer to its
 * nt_customop_meta, which the runtime owns and keeps in place while the tensor lives.
 *
 * Generated from the runtime's sources by `make header`; do not edit. `make test` fails
 * when this copy is stale.
 */

#ifndef NEURON_CUSTOMOP_HOST_RUNTIME_H
#define NEURON_CUSTOMOP_HOST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* A core's stack on the device: 4196 bytes unless the build says -DSTACK_SIZE=N, at
 * most 4 MiB (the shipped library's stack_switch.hpp). bind.hpp refuses more at
 * compile time. */
#define NT_CUSTOMOP_STACK_DEFAULT 4196
#define NT_CUSTOMOP_STACK_MAX 4194304

/* get_cpu_count() on one core: the device's parallel.o says 8 whatever the build. */
#define NT_CUSTOMOP_DEVICE_CPU_COUNT 8

/* Most dimensions of a tensor. */
#define NT_CUSTOMOP_MAX_DIMS 8

/* What an nt_customop_arg holds (its kind). */
enum {
    NT_CUSTOMOP_ARG_NONE = 0, /* nothing */
    NT_CUSTOMOP_ARG_TENSOR = 1, /* meta */
    NT_CUSTOMOP_ARG_INT = 2, /* i: an int64_t parameter */
    NT_CUSTOMOP_ARG_DOUBLE = 3, /* f: a double parameter */
    NT_CUSTOMOP_ARG_SCALAR_INT = 4, /* i: an integral Scalar */
    NT_CUSTOMOP_ARG_SCALAR_FLOAT = 5, /* f: a floating-point Scalar */
};


// What the C++ side reads of a tensor without a call: its place, shape and type. Boxed
// by the runtime, so its address is stable while the tensor lives (the headers'
// `nt_customop_meta`).
typedef struct nt_customop_meta {
  // SoC address of element 0 in the model's HBM (0 for a data-less tensor).
  uint64_t hbm_addr;
  // Elements.
  uint64_t numel;
  // Sizes of the first `ndim` dimensions.
  int64_t sizes[NT_CUSTOMOP_MAX_DIMS];
  // Elements between neighbours in each dimension (C order).
  int64_t strides[NT_CUSTOMOP_MAX_DIMS];
  // Dimensions.
  uint32_t ndim;
  // `c10::ScalarType` code.
  int32_t dtype;
  // The handle the runtime knows it by.
  uint32_t handle;
  // 1 for a shape function's input: a shape, no data.
  uint32_t data_less;
  // 1 while the runtime tracks which elements were written (a tensor made without
  // values, on one core): the headers then tell it of each TCM and stream copy.
  uint32_t track;
  // Zero: the struct's size a multiple of 8 with no hidden padding.
  uint32_t pad;
} nt_customop_meta;

// An argument or operand (`nt_customop_arg`).
typedef struct nt_customop_arg {
  // What it holds: one of the `ARG_*` kinds.
  int32_t kind;
  // The tensor (kind 1).
  const struct nt_customop_meta *meta;
  // The integer (kinds 2 and 4).
  int64_t i;
  // The double (kinds 3 and 5).
  double f;
} nt_customop_arg;

// Calls a registered function: `(function, arguments) -> result tensor (one reference)`
// (`nt_customop_invoker`).
typedef const struct nt_customop_meta *(*nt_customop_invoker)(const void*, const struct nt_customop_arg*);

// A window view's page tables the core filled: local `[lo, hi)` showing SoC from `soc`
// (`nt_customop_filled`).
typedef struct nt_customop_filled {
  // First local address.
  uint64_t lo;
  // One past the last.
  uint64_t hi;
  // The SoC address `lo` showed.
  uint64_t soc;
} nt_customop_filled;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// A new tensor: `fill` 0 leaves it as HBM has it (`empty`), 1 zeros, 2 ones, 3 `value`,
// 4 the identity (2-D). Its meta, one reference.
//
// # Safety
// `sizes` points to `ndim` sizes; `value` is a valid argument.
const struct nt_customop_meta *nt_customop_tensor_new(int dtype, const int64_t *sizes, size_t ndim, int fill, const struct nt_customop_arg *value);

// One more holder of the tensor.
//
// # Safety
// `m` is live.
void nt_customop_tensor_retain(const struct nt_customop_meta *m);

// One fewer; the last frees it.
//
// # Safety
// `m` is live.
void nt_customop_tensor_release(const struct nt_customop_meta *m);

// `fill_(value)`.
//
// # Safety
// `m` is live, `value` valid.
void nt_customop_tensor_fill(const struct nt_customop_meta *m, const struct nt_customop_arg *value);

// Runs operation `op` on `args[0..3]`, into `out` (non-null: the `_out` form) or a new
// tensor; the result's meta (a new tensor has one reference).
//
// # Safety
// `args` points to three valid arguments; `out` is null or live.
const struct nt_customop_meta *nt_customop_apply(int op, const struct nt_customop_meta *out, const struct nt_customop_arg *args);

// The tensor's coherence policy (0 COHERENT, 1 INCOHERENT_VERBOSE, 2 INCOHERENT_QUIET),
// set first unless `set` is -1 ([`tensors::policy`]).
//
// # Safety
// `m` is live.
int nt_customop_policy(const struct nt_customop_meta *m, int set);

// Registers op `name` of library `lib` with its shape function and kernel name
// (`NEURON_LIBRARY`'s `m.def`).
//
// # Safety
// Strings are NUL-terminated; `params` points to `n` kinds.
void nt_customop_register(const char *lib, const char *name, const char *kernel, nt_customop_invoker invoker, const void *function, const int *params, size_t n);

// Binds kernel function `name` (the runner's glue, for each kernel the compute sources
// define).
//
// # Safety
// As [`nt_customop_register`].
void nt_customop_bind(const char *name, nt_customop_invoker invoker, const void *function, const int *params, size_t n);

// The C functions the kernels call that the device runtime lacks, as ntx found them.
//
// # Safety
// `names` points to `n` NUL-terminated strings.
void nt_customop_device_lacks(const char *const *names, size_t n);

// The build opted out of the device's compile (`ntx op build --no-device-parity`, through
// ntx's glue): every run warns that the device would not build it.
void nt_customop_parity_off(void);

// The stack the build gives a core on the device (`-DSTACK_SIZE`, through ntx's glue).
// The C++ headers refuse a size outside 1..=[`crate::base::limits::STACK_MAX`] at compile time;
// a program that passes one anyway stops here, saying so.
void nt_customop_stack_size(uint32_t bytes);

// `get_dst_tensor()`: the op's output (one more reference).
const struct nt_customop_meta *nt_customop_dst_tensor(void);

// `get_cpu_id()`.
uint32_t nt_customop_cpu_id(void);

// `get_cpu_count()`.
uint32_t nt_customop_cpu_count(void);

// The translation context a `Q7PtrType`'s 32-bit handle names: 1, this core's.
void *nt_customop_ctx(uint32_t handle);

// The runner's entry point (the glue's `main`): a run ([`crate::run`]), or with
// `--describe` or `--serve FD` the op's program for the Python front end
// ([`crate::edges::serve`]).
//
// # Safety
// `argv` holds `argc` NUL-terminated strings.
int nt_customop_main(int argc, const char *const *argv);

// A C++ exception left a kernel or a shape function (the invoker caught it): `what` is
// its message (null: not a `std::exception`). Reported as a crash of that phase, which
// ends there.
//
// # Safety
// `what` is null or a NUL-terminated string.
void nt_customop_thrown(const char *what);

// Opens an accessor of `kind` with element type `dtype` (and `ndim` dimensions for a
// standard one) on tensor `m`: a stream gets its TCM buffer (null: a slow stream).
//
// # Safety
// `m` is live.
uint8_t *nt_customop_open(const struct nt_customop_meta *m, int kind, int dtype, int ndim);

// Closes what [`nt_customop_open`] opened (a stream returns its buffer).
//
// # Safety
// `m` is live; `buffer` is what the open returned.
void nt_customop_close(const struct nt_customop_meta *m, int kind, uint8_t *buffer);

// Reports an accessor index outside its dimension (and stops the core).
//
// # Safety
// `m` is live.
void nt_customop_bad_index(const struct nt_customop_meta *m, int dim, int64_t index, int64_t size);

// Reports a stream used past its end (`closed` 0) or after `close()` (1).
//
// # Safety
// `m` is live.
void nt_customop_bad_stream(const struct nt_customop_meta *m, int closed, int write, uint64_t index);

// Counts bytes a stream moved between its tensor and TCM.
void nt_customop_count_tcm(uint64_t in_bytes, uint64_t out_bytes);

// Checks and records a TCM copy of `count` elements of type `dtype` from element
// `offset` (`write`: TCM to tensor).
//
// # Safety
// `m` is live.
void nt_customop_tcm_copy(const struct nt_customop_meta *m, int dtype, uint64_t offset, uint64_t count, int write);

// `torch::neuron::tcm_malloc`: `bytes` from this core's 16 KiB pool, or null.
void *nt_customop_tcm_malloc(size_t bytes);

// The same, called from return address `site` (kept, to place a block never freed).
void *nt_customop_tcm_malloc_at(size_t bytes, const void *site);

// Before a `tcm_to_tensor` of the `bytes` at `p`, called from return address `site`:
// bytes of a watched TCM block that nothing wrote stop the core (`uninitialized-read`).
void nt_customop_tcm_read_at(const void *p, size_t bytes, const void *site);

// The local side of a TCM copy (`bytes` at `p`), called from return address `site`:
// static or global data stops the core (`tcm-copy-not-dataram`).
void nt_customop_tcm_local(const void *p, size_t bytes, const void *site);

// `torch::neuron::tcm_free`: null does nothing; a pointer the pool did not give is
// reported (and stops the core).
void nt_customop_tcm_free(void *p);

// Before a TCM or stream copy of the stretch at local `p` (tensor `m`'s element `first`):
// fills the page tables of that window view ahead ([`access::prefault`]); `*filled`
// becomes the view filled (or found filled), and is left alone outside the windows.
//
// # Safety
// `m` is live; `filled` is valid.
void nt_customop_prefault(const struct nt_customop_meta *m, uint64_t first, const uint8_t *p, int write, struct nt_customop_filled *filled);

// A TCM or stream copy of elements `[first, first + count)` of tensor `m`, or an access to
// one element through a standard accessor, whose written elements the runtime tracks
// (`write`: into it).
//
// # Safety
// `m` is live.
void nt_customop_note(const struct nt_customop_meta *m, uint64_t first, uint64_t count, int write);

// Calls op `op` with `args[0..n]` on `cores` cores (`stats`: 0 none, 1 text, 2 JSON, on
// stdout): the runner's exit status; on 0, `*out` is the output (one reference).
//
// # Safety
// `op` is a NUL-terminated string, `args` points to `n` arguments whose tensors live, `out`
// is valid.
int nt_customop_run(const char *op, const struct nt_customop_arg *args, size_t n, uint32_t cores, int stats, const struct nt_customop_meta **out);

// A tensor holding the array in `.npy` file `path` (one reference), or null with the
// reason on stderr.
//
// # Safety
// `path` is a NUL-terminated string.
const struct nt_customop_meta *nt_customop_load_npy(const char *path);

// Writes tensor `m` to `.npy` file `path`: 0, or -1 with the reason on stderr.
//
// # Safety
// `m` is live; `path` is a NUL-terminated string.
int nt_customop_save_npy(const struct nt_customop_meta *m, const char *path);

// Copies all of tensor `m`'s bytes to `dst` (`write` 0) or from `src` (`write` 1), not
// through a window: `bytes` must be the tensor's size. 0, or -1 if it is not.
//
// # Safety
// `m` is live; `data` is valid for `bytes` bytes.
int nt_customop_bytes(const struct nt_customop_meta *m, uint8_t *data, size_t bytes, int write);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* NEURON_CUSTOMOP_HOST_RUNTIME_H */
