/*
 * The device runtime's requests to the runner (ntx op run --device): a kernel built for
 * the Q7 runs under qemu-xtensa and asks the runner's core process for what the host
 * runtime does (checks, tensors, operations, reports) over a socket, fd NT_DEVICE_FD_RPC.
 * sdk/runtime/src/run/device/answer.rs answers them.
 *
 * Generated from the runtime's codes (sdk/runtime/src/base/codes.rs) by `make header`;
 * do not edit. `make test` fails when this copy is stale.
 */
#ifndef NT_DEVICE_PROTOCOL_H
#define NT_DEVICE_PROTOCOL_H

#include <stdint.h>

/* A file descriptor the device program finds open (`ntx op run --device`). */
enum {
    /* The socket to the runner. */
    NT_DEVICE_FD_RPC = 3,
    /* The model's HBM, from its first SoC address. */
    NT_DEVICE_FD_HBM = 4,
    /* The counting qemu plugin writes here (not the program). */
    NT_DEVICE_FD_COUNTS = 5,
    /*
     * The runner writes the TCM pool's live blocks here, for the counting plugin's store watch
     * to read (not the program).
     */
    NT_DEVICE_FD_WATCH = 6,
};

/*
 * A request of the device program's runtime to the runner. A request is u32 code, u32 payload
 * bytes, the payload; every request gets a reply: u32 payload bytes, the payload. All
 * little-endian. What each carries and is answered with follows its code (from
 * sdk/runtime/src/base/wire.rs).
 */
enum {
    /*
     * The call's start: the core, the model's layout, the kernel and its arguments. Asks:
     * nothing. Answered with: struct nt_device_started, then the kernel's name (name_bytes),
     * u32 arguments, each an operand, then a tensor's meta when the operand is a tensor.
     */
    NT_DEVICE_START = 1,
    /*
     * A factory's new tensor. Asks: struct nt_device_new_tensor. Answered with: a tensor's
     * meta (nt_customop_meta).
     */
    NT_DEVICE_NEW = 2,
    /* A reference taken to a tensor. Asks: struct nt_device_handle. Answered with: nothing. */
    NT_DEVICE_RETAIN = 3,
    /* A reference let go. Asks: struct nt_device_handle. Answered with: nothing. */
    NT_DEVICE_RELEASE = 4,
    /* A tensor filled with a value. Asks: struct nt_device_fill. Answered with: nothing. */
    NT_DEVICE_FILL = 5,
    /*
     * An operation. Asks: struct nt_device_apply. Answered with: a tensor's meta
     * (nt_customop_meta).
     */
    NT_DEVICE_APPLY = 6,
    /*
     * A tensor's policy asked or set. Asks: struct nt_device_policy. Answered with: struct
     * nt_device_value32.
     */
    NT_DEVICE_POLICY = 7,
    /*
     * An accessor opened. Asks: struct nt_device_open. Answered with: struct nt_device_tcm_at,
     * then a tensor's meta (nt_customop_meta).
     */
    NT_DEVICE_OPEN = 8,
    /* An accessor closed. Asks: struct nt_device_close. Answered with: nothing. */
    NT_DEVICE_CLOSE = 9,
    /* An index past a dimension. Asks: struct nt_device_bad_index. Answered with: nothing. */
    NT_DEVICE_BAD_INDEX = 10,
    /* A stream used wrongly. Asks: struct nt_device_bad_stream. Answered with: nothing. */
    NT_DEVICE_BAD_STREAM = 11,
    /*
     * The bytes the TCM copies moved. Asks: struct nt_device_count_tcm. Answered with:
     * nothing.
     */
    NT_DEVICE_COUNT_TCM = 12,
    /* A TCM copy. Asks: struct nt_device_tcm_copy. Answered with: nothing. */
    NT_DEVICE_TCM_COPY = 13,
    /*
     * Elements a copy wrote or read. Asks: struct nt_device_note. Answered with: a tensor's
     * meta (nt_customop_meta).
     */
    NT_DEVICE_NOTE = 14,
    /* `tcm_malloc`. Asks: struct nt_device_tcm_malloc. Answered with: struct nt_device_tcm_at. */
    NT_DEVICE_MALLOC = 15,
    /* `tcm_free`. Asks: struct nt_device_tcm_free. Answered with: nothing. */
    NT_DEVICE_FREE = 16,
    /*
     * `get_dst_tensor`. Asks: struct nt_device_site. Answered with: a tensor's meta
     * (nt_customop_meta).
     */
    NT_DEVICE_DST = 17,
    /*
     * A printf. Asks: printf's pieces, each a struct nt_device_piece, its spec, then an INT's
     * struct nt_device_piece_int, a DOUBLE's struct nt_device_piece_double or a STRING's
     * struct nt_device_piece_string and its bytes. Answered with: struct nt_device_printed.
     */
    NT_DEVICE_PRINT = 18,
    /*
     * The kernel's return, with its translate calls by window (the window table's 5 records,
     * `neuron_translate::layout::RECORDS`). Asks: struct nt_device_return. Answered with:
     * nothing.
     */
    NT_DEVICE_RETURN = 19,
    /*
     * The kernel's frames past its HBM stack. Asks: struct nt_device_stack. Answered with:
     * nothing.
     */
    NT_DEVICE_STACK = 20,
    /*
     * An integer division or remainder by zero. Asks: struct nt_device_place, then the file's
     * name, to the payload's end. Answered with: nothing.
     */
    NT_DEVICE_DIVIDE_BY_ZERO = 21,
    /*
     * Another operation undefined in C++ (an [`Undefined`]). Asks: struct
     * nt_device_undefined_at, then the file's name, to the payload's end. Answered with:
     * nothing.
     */
    NT_DEVICE_UNDEFINED = 22,
    /*
     * `neuron_hbm_allocate`. Asks: struct nt_device_hbm_allocate. Answered with: struct
     * nt_device_hbm_allocated.
     */
    NT_DEVICE_HBM_ALLOCATE = 23,
    /*
     * `neuron_hbm_deallocate`. Asks: struct nt_device_hbm_free. Answered with: struct
     * nt_device_value32.
     */
    NT_DEVICE_HBM_FREE = 24,
    /* `neuron_memcpy`'s check. Asks: struct nt_device_hbm_copy. Answered with: nothing. */
    NT_DEVICE_HBM_COPY = 25,
    /*
     * A TCM copy's local buffer in the program's static or global data. Asks: struct
     * nt_device_not_dataram. Answered with: nothing.
     */
    NT_DEVICE_NOT_DATARAM = 26,
    /*
     * Bytes in the TCM pool a kernel's copy or `memcpy`, `memmove` or `memset` is about to
     * touch, outside every `tcm_malloc` block the device runtime knows. Asks: struct
     * nt_device_tcm_span. Answered with: nothing.
     */
    NT_DEVICE_TCM_SPAN = 27,
    /*
     * `malloc` and `operator new` (the C heap). Asks: struct nt_device_heap_take. Answered
     * with: struct nt_device_heap_at.
     */
    NT_DEVICE_HEAP_TAKE = 28,
    /*
     * `free` and `operator delete` of a C heap block. Asks: struct nt_device_heap_give.
     * Answered with: nothing.
     */
    NT_DEVICE_HEAP_GIVE = 29,
};

/* The payloads: each field little-endian, in order, with no padding (packed). */

/*
 * An operand or a kernel's argument (the C ABI's `nt_customop_arg`): its kind, the tensor's
 * handle (0: not a tensor), the integer, the double.
 */
struct nt_device_operand {
    int32_t kind;
    uint32_t handle;
    int64_t i;
    double f;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_operand) == 24, "struct nt_device_operand: 24 bytes on the wire");

/* One tensor's handle (0: none). */
struct nt_device_handle {
    uint32_t handle;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_handle) == 4, "struct nt_device_handle: 4 bytes on the wire");

/* A call's place in the program: a return address (0: none). */
struct nt_device_site {
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_site) == 4, "struct nt_device_site: 4 bytes on the wire");

/* A check's place in the source; the file's name follows. */
struct nt_device_place {
    uint32_t line;
    uint32_t column;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_place) == 8, "struct nt_device_place: 8 bytes on the wire");

/* START's answer: the core, the model's layout; the kernel's name and its arguments follow. */
struct nt_device_started {
    uint32_t core;
    uint32_t cores;
    uint64_t engine_base;
    uint64_t hbm_scratch;
    uint64_t hbm_base;
    uint64_t hbm_bytes;
    uint32_t name_bytes;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_started) == 44, "struct nt_device_started: 44 bytes on the wire");

/*
 * A factory's tensor: its element type, how it is filled, its sizes (the first `ndim`), the
 * fill's value.
 */
struct nt_device_new_tensor {
    int32_t dtype;
    int32_t fill;
    uint32_t ndim;
    int64_t sizes[8];
    struct nt_device_operand value;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_new_tensor) == 104, "struct nt_device_new_tensor: 104 bytes on the wire");

/* A fill of a tensor with a value. */
struct nt_device_fill {
    uint32_t handle;
    struct nt_device_operand value;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_fill) == 28, "struct nt_device_fill: 28 bytes on the wire");

/* An operation (`Op`'s code) on three operands, into `out` (0: a new tensor). */
struct nt_device_apply {
    int32_t op;
    uint32_t out;
    struct nt_device_operand operands[3];
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_apply) == 84, "struct nt_device_apply: 84 bytes on the wire");

/* A tensor's policy asked (`set` < 0) or set. */
struct nt_device_policy {
    uint32_t handle;
    int32_t set;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_policy) == 8, "struct nt_device_policy: 8 bytes on the wire");

/* A value of 32 bits: a policy, a status. */
struct nt_device_value32 {
    int32_t value;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_value32) == 4, "struct nt_device_value32: 4 bytes on the wire");

/* An accessor opened on a tensor. */
struct nt_device_open {
    uint32_t handle;
    int32_t kind;
    int32_t dtype;
    int32_t ndim;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_open) == 16, "struct nt_device_open: 16 bytes on the wire");

/* A TCM offset (-1: none); a tensor's meta follows where the exchange says so. */
struct nt_device_tcm_at {
    int64_t at;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_tcm_at) == 8, "struct nt_device_tcm_at: 8 bytes on the wire");

/* An accessor closed, with its buffer's TCM offset (-1: none). */
struct nt_device_close {
    uint32_t handle;
    int32_t kind;
    int64_t at;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_close) == 16, "struct nt_device_close: 16 bytes on the wire");

/* An index past a dimension. */
struct nt_device_bad_index {
    uint32_t handle;
    int32_t dim;
    int64_t index;
    int64_t size;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_bad_index) == 24, "struct nt_device_bad_index: 24 bytes on the wire");

/* A stream used closed, or past its end. */
struct nt_device_bad_stream {
    uint32_t handle;
    int32_t closed;
    int32_t write;
    uint64_t index;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_bad_stream) == 20, "struct nt_device_bad_stream: 20 bytes on the wire");

/* Bytes the TCM copies moved in and out. */
struct nt_device_count_tcm {
    uint64_t bytes_in;
    uint64_t bytes_out;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_count_tcm) == 16, "struct nt_device_count_tcm: 16 bytes on the wire");

/* A TCM copy of `count` elements from element `offset`. */
struct nt_device_tcm_copy {
    uint32_t handle;
    int32_t dtype;
    uint64_t offset;
    uint64_t count;
    int32_t write;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_tcm_copy) == 32, "struct nt_device_tcm_copy: 32 bytes on the wire");

/* Elements a copy wrote or read. */
struct nt_device_note {
    uint32_t handle;
    uint64_t first;
    uint64_t count;
    int32_t write;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_note) == 24, "struct nt_device_note: 24 bytes on the wire");

/* `tcm_malloc`. */
struct nt_device_tcm_malloc {
    uint64_t bytes;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_tcm_malloc) == 12, "struct nt_device_tcm_malloc: 12 bytes on the wire");

/* `tcm_free` of a block (`at`, -1: not in the pool) at `pointer`. */
struct nt_device_tcm_free {
    int64_t at;
    uint32_t pointer;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_tcm_free) == 12, "struct nt_device_tcm_free: 12 bytes on the wire");

/* The kernel's return: its tensor, its translate calls, hits and refills by window. */
struct nt_device_return {
    uint32_t handle;
    uint64_t translations;
    uint64_t hits[5];
    uint64_t refills[5];
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_return) == 92, "struct nt_device_return: 92 bytes on the wire");

/*
 * The kernel's frames past its HBM stack: the build's `STACK_SIZE`, the depth, and whether
 * deeper than measured (1).
 */
struct nt_device_stack {
    uint32_t limit;
    uint64_t depth;
    uint32_t at_least;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_stack) == 16, "struct nt_device_stack: 16 bytes on the wire");

/* An operation undefined in C++ (an `Undefined` code) at a place; the file's name follows. */
struct nt_device_undefined_at {
    uint32_t what;
    uint32_t line;
    uint32_t column;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_undefined_at) == 12, "struct nt_device_undefined_at: 12 bytes on the wire");

/* `neuron_hbm_allocate`. */
struct nt_device_hbm_allocate {
    uint32_t bytes;
    uint32_t align;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_hbm_allocate) == 12, "struct nt_device_hbm_allocate: 12 bytes on the wire");

/* `neuron_hbm_allocate`'s answer: its status, the address. */
struct nt_device_hbm_allocated {
    int32_t status;
    uint64_t address;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_hbm_allocated) == 12, "struct nt_device_hbm_allocated: 12 bytes on the wire");

/* `neuron_hbm_deallocate`. */
struct nt_device_hbm_free {
    uint64_t address;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_hbm_free) == 12, "struct nt_device_hbm_free: 12 bytes on the wire");

/* `neuron_memcpy`'s check: the HBM side, and whether it is written. */
struct nt_device_hbm_copy {
    uint64_t address;
    uint64_t bytes;
    int32_t write;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_hbm_copy) == 24, "struct nt_device_hbm_copy: 24 bytes on the wire");

/* A TCM copy's local buffer in the program's static or global data. */
struct nt_device_not_dataram {
    uint32_t address;
    uint32_t bytes;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_not_dataram) == 12, "struct nt_device_not_dataram: 12 bytes on the wire");

/*
 * Bytes of the TCM pool a copy is about to touch outside every block: the offset from the
 * pool's first byte (below it as a u32 wrapped), the bytes.
 */
struct nt_device_tcm_span {
    uint32_t offset;
    uint32_t bytes;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_tcm_span) == 12, "struct nt_device_tcm_span: 12 bytes on the wire");

/* `malloc` and `operator new` (`new`: 1) of the C heap. */
struct nt_device_heap_take {
    uint64_t bytes;
    uint32_t align;
    uint32_t new;
    uint32_t site;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_heap_take) == 20, "struct nt_device_heap_take: 20 bytes on the wire");

/* `free` and `operator delete` of a C heap block. */
struct nt_device_heap_give {
    uint32_t offset;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_heap_give) == 4, "struct nt_device_heap_give: 4 bytes on the wire");

/*
 * The C heap's answer: the block's offset in the C heap (-1: none; -2: outside a kernel, from
 * the program's own heap).
 */
struct nt_device_heap_at {
    int64_t at;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_heap_at) == 8, "struct nt_device_heap_at: 8 bytes on the wire");

/* PRINT's answer: the bytes printed. */
struct nt_device_printed {
    uint32_t bytes;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_printed) == 4, "struct nt_device_printed: 4 bytes on the wire");

/*
 * A printf piece: its type (a `PrintPiece`) and its spec's bytes; the spec (or the text)
 * follows, then the value of an INT, DOUBLE or STRING piece.
 */
struct nt_device_piece {
    uint8_t kind;
    uint8_t spec_bytes;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_piece) == 2, "struct nt_device_piece: 2 bytes on the wire");

/* An INT piece's value. */
struct nt_device_piece_int {
    int64_t value;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_piece_int) == 8, "struct nt_device_piece_int: 8 bytes on the wire");

/* A DOUBLE piece's value. */
struct nt_device_piece_double {
    double value;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_piece_double) == 8, "struct nt_device_piece_double: 8 bytes on the wire");

/* A STRING piece's bytes, which follow. */
struct nt_device_piece_string {
    uint32_t bytes;
} __attribute__((packed));
_Static_assert(sizeof(struct nt_device_piece_string) == 4, "struct nt_device_piece_string: 4 bytes on the wire");

/* A piece of a device printf (u8 type, u8 spec bytes, the spec, the value). */
enum {
    /* Text: the spec is the text. */
    NT_DEVICE_TEXT = 0,
    /* A 64-bit integer. */
    NT_DEVICE_INT = 1,
    /* A double. */
    NT_DEVICE_DOUBLE = 2,
    /* A string: u32 bytes, then the bytes. */
    NT_DEVICE_STRING = 3,
};

/*
 * An operation undefined in C++ that the kernels' checks catch (`-fsanitize=`
 * `signed-integer-overflow`, `shift-exponent`, `float-cast-overflow`), on the host as on the
 * device: each is `undefined-arithmetic`, at the kernel's line.
 */
enum {
    /*
     * A signed integer operation whose result its type cannot hold (the most negative value
     * divided by -1 too).
     */
    NT_DEVICE_UB_SIGNED_OVERFLOW = 1,
    /* A shift by a negative amount or by the operand's width or more. */
    NT_DEVICE_UB_SHIFT = 2,
    /*
     * A floating-point value converted to an integer type that cannot hold it (NaN, infinite
     * or out of range).
     */
    NT_DEVICE_UB_FLOAT_TO_INTEGER = 3,
};

/*
 * Why the device program's runtime ended the program itself (its exit status): an exchange
 * with the runner that broke, or a limit of the runtime, which no kernel of the device's own
 * kind reaches; the runner says which.
 */
enum {
    /* A request's payload past the runtime's 64 KiB message. */
    NT_DEVICE_EXIT_REQUEST_TOO_LONG = 70,
    /* The runner's socket took no more (the runner had stopped). */
    NT_DEVICE_EXIT_RUNNER_GONE = 71,
    /* An answer past the runtime's 64 KiB message. */
    NT_DEVICE_EXIT_ANSWER_TOO_LONG = 72,
    /* A tensor handle past the runtime's 4,096 tensors. */
    NT_DEVICE_EXIT_TOO_MANY_TENSORS = 73,
    /* A window's memory that could not be mapped where the window table puts it. */
    NT_DEVICE_EXIT_MAP_FAILED = 74,
    /* A kernel name past the runtime's buffer. */
    NT_DEVICE_EXIT_NAME_TOO_LONG = 75,
    /* A call of more than 64 arguments. */
    NT_DEVICE_EXIT_TOO_MANY_ARGUMENTS = 76,
    /* A `STACK_SIZE` of 0 or past 4 MiB. */
    NT_DEVICE_EXIT_BAD_STACK_SIZE = 77,
};

#endif /* NT_DEVICE_PROTOCOL_H */
