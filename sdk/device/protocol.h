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
 * little-endian. An arg is u32 kind, u32 handle, i64, f64, then a tensor's meta.
 */
enum {
    /*
     * -> u32 core, u32 cores, u64 engine base, u64 hbm_scratch, u64 HBM base, u64 HBM bytes,
     * u32 name bytes, name, u32 args, args.
     */
    NT_DEVICE_START = 1,
    /* i32 dtype, i32 fill, u32 ndim, i64 sizes[ndim], arg, u32 site -> meta. */
    NT_DEVICE_NEW = 2,
    /* u32 handle. */
    NT_DEVICE_RETAIN = 3,
    /* u32 handle. */
    NT_DEVICE_RELEASE = 4,
    /* u32 handle, arg. */
    NT_DEVICE_FILL = 5,
    /* i32 op, u32 out handle (0: none), arg[3], u32 site -> meta. */
    NT_DEVICE_APPLY = 6,
    /* u32 handle, i32 set -> i32. */
    NT_DEVICE_POLICY = 7,
    /* u32 handle, i32 kind, i32 dtype, i32 ndim -> i64 buffer's TCM offset (-1: none), meta. */
    NT_DEVICE_OPEN = 8,
    /* u32 handle, i32 kind, i64 buffer's TCM offset (-1: none). */
    NT_DEVICE_CLOSE = 9,
    /* u32 handle, i32 dim, i64 index, i64 size. */
    NT_DEVICE_BAD_INDEX = 10,
    /* u32 handle, i32 closed, i32 write, u64 index. */
    NT_DEVICE_BAD_STREAM = 11,
    /* u64 in, u64 out. */
    NT_DEVICE_COUNT_TCM = 12,
    /* u32 handle, i32 dtype, u64 offset, u64 count, i32 write, u32 site. */
    NT_DEVICE_TCM_COPY = 13,
    /* u32 handle, u64 first, u64 count, i32 write -> meta. */
    NT_DEVICE_NOTE = 14,
    /* u64 bytes, u32 site -> i64 TCM offset (-1: none). */
    NT_DEVICE_MALLOC = 15,
    /* i64 TCM offset (-1: not TCM), u32 pointer. */
    NT_DEVICE_FREE = 16,
    /* u32 site -> meta. */
    NT_DEVICE_DST = 17,
    /* printf's pieces -> u32 bytes printed. */
    NT_DEVICE_PRINT = 18,
    /*
     * u32 handle (0: none), u64 translations, u64 hits[RECORDS], u64 refills[RECORDS] (the
     * window table's 5 records, `neuron_translate::layout::RECORDS`).
     */
    NT_DEVICE_RETURN = 19,
    /* u32 limit, u64 depth, u32 at least (1: deeper than measured). */
    NT_DEVICE_STACK = 20,
    /* An integer division or remainder by zero: u32 line, u32 column, the file's name. */
    NT_DEVICE_DIVIDE_BY_ZERO = 21,
    /*
     * Another operation undefined in C++: u32 what (an [`Undefined`]), u32 line, u32 column,
     * the file's name.
     */
    NT_DEVICE_UNDEFINED = 22,
    /* `neuron_hbm_allocate`: u32 bytes, u32 alignment, u32 site -> i32 status, u64 address. */
    NT_DEVICE_HBM_ALLOCATE = 23,
    /* `neuron_hbm_deallocate`: u64 address, u32 site -> i32 status. */
    NT_DEVICE_HBM_FREE = 24,
    /* `neuron_memcpy`'s check: u64 HBM address, u64 bytes, i32 write (to HBM), u32 site. */
    NT_DEVICE_HBM_COPY = 25,
    /*
     * A TCM copy's local buffer in the program's static or global data: u32 address, u32
     * bytes, u32 site.
     */
    NT_DEVICE_NOT_DATARAM = 26,
    /*
     * Bytes in the TCM pool a kernel's copy or `memcpy`, `memmove` or `memset` is about to
     * touch, outside every `tcm_malloc` block the device runtime knows: u32 pool offset (from
     * the pool's first byte; it may be in the red zone before it, as u32 wrapped), u32 bytes,
     * u32 site.
     */
    NT_DEVICE_TCM_SPAN = 27,
    /*
     * `malloc` and `operator new` (the C heap): u64 bytes, u32 alignment, u32 operator new
     * (1), u32 site -> i64 offset in the C heap (-1: none; -2: outside a kernel, from the
     * program's own heap).
     */
    NT_DEVICE_HEAP_TAKE = 28,
    /* `free` and `operator delete` of a C heap block: u32 offset. */
    NT_DEVICE_HEAP_GIVE = 29,
};

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
