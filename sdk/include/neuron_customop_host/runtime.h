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

/* The codes and limits below are the runtime's (sdk/runtime/src/base/codes.rs). */

/*
 * A core's stack on the device: 4196 bytes unless the build says -DSTACK_SIZE=N, at most 4 MiB
 * (the shipped library's stack_switch.hpp). bind.hpp refuses more at compile time.
 */
#define NT_CUSTOMOP_STACK_DEFAULT 4196

#define NT_CUSTOMOP_STACK_MAX 4194304

/* The HBM stack switched to: its top aligned down to this, less the saved context. */
#define NT_CUSTOMOP_STACK_SWITCH_ALIGN 16

#define NT_CUSTOMOP_STACK_SWITCH_CONTEXT 128

/* A core's physical local memory, which holds its own stack: that stack's room is less. */
#define NT_CUSTOMOP_CORE_DRAM 262144

/* get_cpu_count() on one core: the device's parallel.o says 8 whatever the build. */
#define NT_CUSTOMOP_DEVICE_CPU_COUNT 8

/* Most dimensions of a tensor. */
#define NT_CUSTOMOP_MAX_DIMS 8

/* Bytes of a core's TCM pool (the device's dataram heap). */
#define NT_CUSTOMOP_TCM_POOL_BYTES 16384

/* The alignment of a TCM block when none is asked. */
#define NT_CUSTOMOP_TCM_ALIGN 64

/* A core's C heap (a kernel's malloc and new), set up before each call; its alignment. */
#define NT_CUSTOMOP_C_HEAP_BYTES 10240

#define NT_CUSTOMOP_C_HEAP_ALIGN 8

/* The byte a TCM block's slack is filled with (a store there is found when it is freed). */
#define NT_CUSTOMOP_TCM_SLACK 0xa5

/* Bytes of a stream accessor's buffer in TCM. */
#define NT_CUSTOMOP_STREAM_BUFFER_BYTES 4096

/* The most arguments a call through nt_customop_run takes. */
#define NT_CUSTOMOP_MAX_CALL_ARGS 16

/* What an `nt_customop_arg` holds (its `kind`). */
enum {
    /* Nothing. */
    NT_CUSTOMOP_ARG_NONE = 0,
    /* A tensor: `meta`. */
    NT_CUSTOMOP_ARG_TENSOR = 1,
    /* An `int64_t` parameter: `i`. */
    NT_CUSTOMOP_ARG_INT = 2,
    /* A `double` parameter: `f`. */
    NT_CUSTOMOP_ARG_DOUBLE = 3,
    /* An integral Scalar: `i`. */
    NT_CUSTOMOP_ARG_SCALAR_INT = 4,
    /* A floating-point Scalar: `f`. */
    NT_CUSTOMOP_ARG_SCALAR_FLOAT = 5,
};

/* An accessor's kind (`kind` of `nt_customop_open`). */
enum {
    /* `t.accessor<T, N>()`. */
    NT_CUSTOMOP_ACCESSOR_STANDARD = 0,
    /* `t.read_stream_accessor<T>()`. */
    NT_CUSTOMOP_ACCESSOR_READ_STREAM = 1,
    /* `t.write_stream_accessor<T>()`. */
    NT_CUSTOMOP_ACCESSOR_WRITE_STREAM = 2,
    /* `t.tcm_accessor()`. */
    NT_CUSTOMOP_ACCESSOR_TCM = 3,
};

/*
 * A tensor's coherence policy (`torch::CoherencyEnforcer::Policy`, `set` of
 * `nt_customop_policy`).
 */
enum {
    /* Incoherent accessors are an error (`incoherent-accessors`); the default. */
    NT_CUSTOMOP_POLICY_COHERENT = 0,
    /* Allowed, with a warning (`incoherent-accessors-allowed`). */
    NT_CUSTOMOP_POLICY_INCOHERENT_VERBOSE = 1,
    /* Allowed, silently. */
    NT_CUSTOMOP_POLICY_INCOHERENT_QUIET = 2,
};

/* How a factory fills its new tensor (`fill` of `nt_customop_tensor_new`). */
enum {
    /* As HBM has it (`torch::empty`). */
    NT_CUSTOMOP_FILL_EMPTY = 0,
    /* `torch::zeros`. */
    NT_CUSTOMOP_FILL_ZEROS = 1,
    /* `torch::ones`. */
    NT_CUSTOMOP_FILL_ONES = 2,
    /* `torch::full`: the factory's value. */
    NT_CUSTOMOP_FILL_VALUE = 3,
    /* `torch::eye` (2-D). */
    NT_CUSTOMOP_FILL_EYE = 4,
};

/* An operation of `<torch/torch.h>` (`op` of `nt_customop_apply`). */
enum {
    /* abs */
    NT_CUSTOMOP_OP_ABS = 0,
    /* ceil */
    NT_CUSTOMOP_OP_CEIL = 1,
    /* floor */
    NT_CUSTOMOP_OP_FLOOR = 2,
    /* sin */
    NT_CUSTOMOP_OP_SIN = 3,
    /* cos */
    NT_CUSTOMOP_OP_COS = 4,
    /* tan */
    NT_CUSTOMOP_OP_TAN = 5,
    /* log */
    NT_CUSTOMOP_OP_LOG = 6,
    /* log2 */
    NT_CUSTOMOP_OP_LOG2 = 7,
    /* log10 */
    NT_CUSTOMOP_OP_LOG10 = 8,
    /* exp */
    NT_CUSTOMOP_OP_EXP = 9,
    /* pow */
    NT_CUSTOMOP_OP_POW = 10,
    /* clamp */
    NT_CUSTOMOP_OP_CLAMP = 11,
    /* add */
    NT_CUSTOMOP_OP_ADD = 12,
    /* sub */
    NT_CUSTOMOP_OP_SUB = 13,
    /* mul */
    NT_CUSTOMOP_OP_MUL = 14,
    /* div */
    NT_CUSTOMOP_OP_DIV = 15,
    /* bitwise_and */
    NT_CUSTOMOP_OP_BITWISE_AND = 16,
    /* bitwise_or */
    NT_CUSTOMOP_OP_BITWISE_OR = 17,
    /* bitwise_not */
    NT_CUSTOMOP_OP_BITWISE_NOT = 18,
};

/*
 * A kernel parameter's kind, as the headers read it from the C++ function's type (the `kinds`
 * of `nt_customop_bind`).
 */
enum {
    /* `torch::Tensor` (by value or reference). */
    NT_CUSTOMOP_PARAM_TENSOR = 1,
    /* `int64_t`. */
    NT_CUSTOMOP_PARAM_INT = 2,
    /* `double`. */
    NT_CUSTOMOP_PARAM_DOUBLE = 3,
    /* `torch::Scalar`. */
    NT_CUSTOMOP_PARAM_SCALAR = 4,
    /* `int`: a kernel's integer as the device's build declares it (its schema's `int`). */
    NT_CUSTOMOP_PARAM_INT32 = 5,
    /* `float`: a kernel's floating-point number as the device's build declares it. */
    NT_CUSTOMOP_PARAM_FLOAT32 = 6,
};

/* What the runner API prints of a call (`stats` of `nt_customop_run`). */
enum {
    /* Nothing. */
    NT_CUSTOMOP_STATS_NONE = 0,
    /* Lines for people, on stdout. */
    NT_CUSTOMOP_STATS_TEXT = 1,
    /* One JSON document, on stdout. */
    NT_CUSTOMOP_STATS_JSON = 2,
};

/* The runner's exit status (`ntx op run`, `nt_customop_run`), one meaning each. */
enum {
    /* Ran (warnings allowed). */
    NT_CUSTOMOP_EXIT_RAN = 0,
    /* A call or an input refused: nothing ran, nothing written. */
    NT_CUSTOMOP_EXIT_REFUSED = 1,
    /* A misuse error stopped the run. */
    NT_CUSTOMOP_EXIT_MISUSE = 2,
    /* A kernel crashed on a core. */
    NT_CUSTOMOP_EXIT_CRASHED = 3,
    /* A kernel (or the shape function) still ran when the timeout ran out. */
    NT_CUSTOMOP_EXIT_TIMEOUT = 4,
};

/* An element type, by the code `c10::ScalarType` gives it. */
enum {
    /* `uint8_t`, `torch::kByte`. */
    NT_CUSTOMOP_DTYPE_BYTE = 0,
    /* `int8_t`, `torch::kChar`. */
    NT_CUSTOMOP_DTYPE_CHAR = 1,
    /* `int16_t`, `torch::kShort`. */
    NT_CUSTOMOP_DTYPE_SHORT = 2,
    /* `int32_t`, `torch::kInt`. */
    NT_CUSTOMOP_DTYPE_INT = 3,
    /* `int64_t`, `torch::kLong`. */
    NT_CUSTOMOP_DTYPE_LONG = 4,
    /* IEEE binary16, `torch::kHalf`. */
    NT_CUSTOMOP_DTYPE_HALF = 5,
    /* IEEE binary32, `torch::kFloat`. */
    NT_CUSTOMOP_DTYPE_FLOAT = 6,
    /* bfloat16, `torch::kBFloat16`. */
    NT_CUSTOMOP_DTYPE_BFLOAT16 = 15,
};

/* The operations of one tensor: X(name, code). */
#define NT_CUSTOMOP_UNARY_OPS(X) \
    X(abs, NT_CUSTOMOP_OP_ABS) \
    X(ceil, NT_CUSTOMOP_OP_CEIL) \
    X(floor, NT_CUSTOMOP_OP_FLOOR) \
    X(sin, NT_CUSTOMOP_OP_SIN) \
    X(cos, NT_CUSTOMOP_OP_COS) \
    X(tan, NT_CUSTOMOP_OP_TAN) \
    X(log, NT_CUSTOMOP_OP_LOG) \
    X(log2, NT_CUSTOMOP_OP_LOG2) \
    X(log10, NT_CUSTOMOP_OP_LOG10) \
    X(exp, NT_CUSTOMOP_OP_EXP) \
    X(bitwise_not, NT_CUSTOMOP_OP_BITWISE_NOT)

/*
 * The operations of two operands, one overload each: X(name, code, A, B), A and B Tensor or
 * Scalar.
 */
#define NT_CUSTOMOP_BINARY_OPS(X) \
    X(pow, NT_CUSTOMOP_OP_POW, Tensor, Tensor) \
    X(pow, NT_CUSTOMOP_OP_POW, Tensor, Scalar) \
    X(pow, NT_CUSTOMOP_OP_POW, Scalar, Tensor) \
    X(mul, NT_CUSTOMOP_OP_MUL, Tensor, Tensor) \
    X(mul, NT_CUSTOMOP_OP_MUL, Tensor, Scalar) \
    X(div, NT_CUSTOMOP_OP_DIV, Tensor, Tensor) \
    X(div, NT_CUSTOMOP_OP_DIV, Tensor, Scalar) \
    X(bitwise_and, NT_CUSTOMOP_OP_BITWISE_AND, Tensor, Tensor) \
    X(bitwise_and, NT_CUSTOMOP_OP_BITWISE_AND, Tensor, Scalar) \
    X(bitwise_and, NT_CUSTOMOP_OP_BITWISE_AND, Scalar, Tensor) \
    X(bitwise_or, NT_CUSTOMOP_OP_BITWISE_OR, Tensor, Tensor) \
    X(bitwise_or, NT_CUSTOMOP_OP_BITWISE_OR, Tensor, Scalar) \
    X(bitwise_or, NT_CUSTOMOP_OP_BITWISE_OR, Scalar, Tensor)

/* self + alpha * other and the like: X(name, code, B), other a B (Tensor or Scalar). */
#define NT_CUSTOMOP_ALPHA_OPS(X) \
    X(add, NT_CUSTOMOP_OP_ADD, Tensor) \
    X(add, NT_CUSTOMOP_OP_ADD, Scalar) \
    X(sub, NT_CUSTOMOP_OP_SUB, Tensor) \
    X(sub, NT_CUSTOMOP_OP_SUB, Scalar)

/* op(self, min, max): X(name, code). */
#define NT_CUSTOMOP_CLAMP_OPS(X) \
    X(clamp, NT_CUSTOMOP_OP_CLAMP)

/* The element types: X(name, C++ type in c10, bytes, integral). */
#define NT_CUSTOMOP_DTYPE_TABLE(X) \
    X(Byte, uint8_t, 1, 1) \
    X(Char, int8_t, 1, 1) \
    X(Short, int16_t, 2, 1) \
    X(Int, int32_t, 4, 1) \
    X(Long, int64_t, 8, 1) \
    X(Half, Half, 2, 0) \
    X(Float, float, 4, 0) \
    X(BFloat16, BFloat16, 2, 0)


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

// A new tensor of element type `dtype` (a [`crate::base::codes::DType`] code) filled as
// `fill` (a [`crate::base::codes::Fill`] code) says (`value` for `Fill::Value`). Its
// meta, one reference. `site` is the call's return address, which the emulated Q7's
// runtime sends to place a report; here the stack places it, and `site` is not read.
//
// # Safety
// `sizes` points to `ndim` sizes; `value` is a valid argument.
const struct nt_customop_meta *nt_customop_tensor_new(int dtype, const int64_t *sizes, size_t ndim, int fill, const struct nt_customop_arg *value, const void *site);

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
// tensor; the result's meta (a new tensor has one reference). `site` as for
// [`nt_customop_tensor_new`].
//
// # Safety
// `args` points to three valid arguments; `out` is null or live.
const struct nt_customop_meta *nt_customop_apply(int op, const struct nt_customop_meta *out, const struct nt_customop_arg *args, const void *site);

// The tensor's coherence policy's code ([`crate::base::codes::Policy`]), set first
// unless `set` is -1.
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
// `offset` (`write`: TCM to tensor). `site` is the kernel's call's return address, which
// the emulated Q7's runtime sends to place a finding; here the stack places it, and
// `site` is not read.
//
// # Safety
// `m` is live.
void nt_customop_tcm_copy(const struct nt_customop_meta *m, int dtype, uint64_t offset, uint64_t count, int write, const void *site);

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

// `neuron_hbm_allocate(bytes, out, align)`: 0 and the block's SoC address in `*out`, or -1
// when this call's HBM heap has no block for it (`*out` untouched).
//
// # Safety
// `out` points to a writable `u64`.
int nt_customop_hbm_allocate(uint32_t bytes, uint64_t *out, uint32_t align);

// `neuron_hbm_deallocate(addr)`: 0, or -1 for an address no live block starts at (which
// is also reported).
int nt_customop_hbm_deallocate(uint64_t addr);

// `neuron_memcpy`'s check of `bytes` between local `local` and HBM `addr` (`write`: to
// HBM), before the caller moves them. `site` as for [`nt_customop_tcm_copy`] (the stack
// places a finding here).
void nt_customop_hbm_copy(uint64_t addr, uint64_t bytes, const void *local, int write, const void *site);

// `malloc(bytes)`.
void *nt_customop_heap_malloc(size_t bytes);

// `operator new(bytes)`: where the device's heap has no room, the core has stopped.
void *nt_customop_heap_new(size_t bytes);

// `calloc(count, size)`: NULL where the product overflows, as the C library's.
void *nt_customop_heap_calloc(size_t count, size_t size);

// `aligned_alloc(align, bytes)` and `memalign`: NULL for an alignment not a power of two.
void *nt_customop_heap_aligned(size_t align, size_t bytes);

// `posix_memalign(out, align, bytes)`: 0, `EINVAL` or `ENOMEM`, as the C library's.
//
// # Safety
// `out` is writable.
int nt_customop_heap_posix_memalign(void **out, size_t align, size_t bytes);

// `free(p)` and every `operator delete`.
//
// # Safety
// `p` is null, a block of this heap, or the C library's.
void nt_customop_heap_free(void *p);

// `realloc(p, bytes)`: a new block with the old one's bytes, the old one freed; NULL (the
// old one kept) where the heap has no room.
//
// # Safety
// As [`nt_customop_heap_free`].
void *nt_customop_heap_realloc(void *p, size_t bytes);

// `strndup(s, most)`; `strdup` is `most` = `usize::MAX`.
//
// # Safety
// `s` is a C string, or `most` bytes readable.
char *nt_customop_heap_strndup(const char *s, size_t most);

// `strdup(s)`.
//
// # Safety
// `s` is a C string.
char *nt_customop_heap_strdup(const char *s);

// Calls op `op` with `args[0..n]` on `cores` cores (`stats`: a [`Stats`] code, what it
// prints on stdout): the runner's exit status ([`ExitStatus`]); on `Ran`, `*out` is the
// output (one reference).
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

// Copies all of tensor `m`'s bytes to `data` (`write` 0) or from `data` (`write` 1), not
// through a window: `bytes` must be the tensor's size. 0, or -1 if it is not.
//
// # Safety
// `m` is live; `data` is valid for `bytes` bytes.
int nt_customop_bytes(const struct nt_customop_meta *m, uint8_t *data, size_t bytes, int write);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* NEURON_CUSTOMOP_HOST_RUNTIME_H */
