/*
 * The device runtime's requests to the runner (ntx op run --device): a kernel built for
 * the Q7 runs under qemu-xtensa and asks the runner's core process for what the host
 * runtime does (checks, tensors, operations, reports) over a socket, fd NT_DEVICE_FD_RPC.
 * A request is u32 code, u32 payload bytes, the payload; every request gets a reply: u32
 * payload bytes, the payload. All little-endian. sdk/runtime/src/run/device/mod.rs serves them
 * (sdk/tests/tests/sdk_abi.rs holds the two lists of codes to each other).
 */
#ifndef NT_DEVICE_PROTOCOL_H
#define NT_DEVICE_PROTOCOL_H

#define NT_DEVICE_FD_RPC 3 /* the socket to the runner */
#define NT_DEVICE_FD_HBM 4 /* the model's HBM, from its first SoC address */
#define NT_DEVICE_FD_COUNTS 5 /* the counting qemu plugin writes here (not the program) */

enum {
    NT_DEVICE_START = 1,   /* -> u32 core, u32 cores, u64 engine base, u64 hbm_scratch, u64 HBM base,
                              u64 HBM bytes, u32 name bytes, name, u32 args, args (arg: u32 kind, u32
                              handle, i64, f64, then a tensor's meta) */
    NT_DEVICE_NEW = 2,     /* i32 dtype, i32 fill, u32 ndim, i64 sizes[ndim], arg -> meta */
    NT_DEVICE_RETAIN = 3,  /* u32 handle */
    NT_DEVICE_RELEASE = 4, /* u32 handle */
    NT_DEVICE_FILL = 5,    /* u32 handle, arg */
    NT_DEVICE_APPLY = 6,   /* i32 op, u32 out handle (0: none), arg[3] -> meta */
    NT_DEVICE_POLICY = 7,  /* u32 handle, i32 set -> i32 */
    NT_DEVICE_OPEN = 8,    /* u32 handle, i32 kind, i32 dtype, i32 ndim -> i64 buffer's TCM offset (-1: none), meta */
    NT_DEVICE_CLOSE = 9,   /* u32 handle, i32 kind, i64 buffer's TCM offset (-1: none) */
    NT_DEVICE_BAD_INDEX = 10,  /* u32 handle, i32 dim, i64 index, i64 size */
    NT_DEVICE_BAD_STREAM = 11, /* u32 handle, i32 closed, i32 write, u64 index */
    NT_DEVICE_COUNT_TCM = 12,  /* u64 in, u64 out */
    NT_DEVICE_TCM_COPY = 13,   /* u32 handle, i32 dtype, u64 offset, u64 count, i32 write */
    NT_DEVICE_NOTE = 14,       /* u32 handle, u64 first, u64 count, i32 write -> meta */
    NT_DEVICE_MALLOC = 15,     /* u64 bytes, u32 site -> i64 TCM offset (-1: none) */
    NT_DEVICE_FREE = 16,       /* i64 TCM offset (-1: not TCM), u32 pointer */
    NT_DEVICE_DST = 17,        /* -> meta */
    NT_DEVICE_PRINT = 18,      /* printf's pieces (printf.c) -> u32 bytes printed */
    NT_DEVICE_RETURN = 19,     /* u32 handle (0: none), u64 translations, u64 hits[5], u64 refills[5] */
    NT_DEVICE_STACK = 20,      /* u32 limit, u64 depth, u32 at least (1: deeper than measured) */
};

/* A printf piece (u8 type, u8 spec bytes, the spec, the value): text (the spec is the
 * text), a 64-bit integer, a double, a string (u32 bytes, then the bytes). */
enum { NT_DEVICE_TEXT = 0, NT_DEVICE_INT = 1, NT_DEVICE_DOUBLE = 2, NT_DEVICE_STRING = 3 };

#endif
