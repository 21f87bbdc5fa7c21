// The cases of misuse.cpp, by name. The tests name a case, never its number: they read
// the numbers from this file (cases.py), so adding or renumbering a case cannot shift
// another test's expectation. A number is stable once given.
#ifndef MISUSE_CASES_H
#define MISUSE_CASES_H

enum misuse_case {
    STANDARD_ACCESSOR_MULTICORE = 0, // a standard accessor under several cores
    INDEX_PAST_END = 1,              // an accessor's row index one past the end
    ACCESSOR_WRONG_TYPE = 2,         // an int32 accessor on float elements
    INCOHERENT_ACCESSORS = 3,        // a read stream and an accessor on one tensor
    INCOHERENT_VERBOSE = 4,          // the same under INCOHERENT_VERBOSE: a warning
    STREAM_PAST_END = 5,             // a read stream read once past its last element
    STREAM_AFTER_CLOSE = 6,          // a write stream written after close()
    FIVE_STREAMS = 7,                // five read streams open at once
    TCM_COPY_PAST_END = 8,           // tensor_to_tcm past the tensor's end
    TCM_FREE_FOREIGN = 9,            // tcm_free of a buffer tcm_malloc never gave
    SHAPE_READS_DATA = 10,           // the shape function reads its input's data
    RETURNED_OTHER_TENSOR = 11,      // a returned tensor of another shape
    MULTICORE_NO_DST = 12,           // several cores, get_dst_tensor() never called
    CORES_WRITE_SAME = 13,           // both cores write every element
    CORE_READS_OTHER = 14,           // core 1 reads what core 0 writes
    ONLY_CORE0_WRITES = 15,          // only core 0 writes its half
    SIZE_PAST_DIMS = 16,             // size(2) of a 2-dimensional tensor
    OPERATION_ERROR = 17,            // torch::add of shapes that do not broadcast
    CRASH = 18,                      // a store through a null pointer
    INCOHERENT_QUIET = 19,           // incoherent accessors under INCOHERENT_QUIET: silent
    TCM_LEAK = 20,                   // a TCM block never freed
    TCM_STORE_PAST_END = 21,         // 8 floats past the end of a 256-float block
    TCM_LOAD_FREED = 22,             // a load from a freed block
    EMPTY_READ_UNWRITTEN = 23,       // an empty tensor's elements copied out unwritten
    OUTPUT_READ_UNWRITTEN = 24,      // the output's elements copied out unwritten
    EMPTY_READ_WRITTEN = 25,         // the same, read only where written: no report
    STANDARD_READ_UNWRITTEN = 26,    // an unwritten element read by a standard accessor
    TCM_COPY_UNWRITTEN = 27,         // TCM bytes copied out before anything wrote them
    TCM_LOAD_UNWRITTEN = 28,         // TCM bytes loaded before anything wrote them
    TCM_READ_WRITTEN = 29,           // the same, written first: no report
    TCM_STORE_PAST_GUARD = 30,       // a store 5000 bytes past a 64-byte block
    TCM_STORE_BEFORE_BLOCK = 31,     // a store just before a 4096-byte block
    FIRST_ROW_ONLY = 32,             // one core writes the output's first row only
    ACCESSOR_OUTLIVES_TENSOR = 33,   // an accessor read after its tensor's last handle let it go
    TCM_COPY_PAST_BLOCK = 34,        // tensor_to_tcm of 1200 bytes into a 1000-byte block
    TCM_OVER_BY_1 = 35,              // a byte stored 1 past a 1000-byte block's end
    TCM_OVER_BY_4 = 36,              // j <= 250 over a block of 250 floats
    TCM_OVER_BY_15 = 37,             // a byte stored 15 past a 1000-byte block's end
    DIVIDE_BY_ZERO = 38,             // an int divided by an int that is zero
    SIGNED_OVERFLOW = 39,            // an int product past INT_MAX (the host only: --device does not check)
    SHIFT_PAST_WIDTH = 40,           // an int shifted by 32
    FLOAT_TO_INT_OVERFLOW = 41,      // (int)3e9f: x86's INT_MIN, the Q7's INT_MAX
    MIN_DIVIDED_BY_MINUS_ONE = 42,   // INT_MIN / -1 (the host only, as SIGNED_OVERFLOW)
    HBM_HEAP_33_LIVE = 43,           // 33 of the kernel's tensors live: the device's HBM heap describes 32
    HBM_HEAP_32_LIVE = 44,           // 32 live at once: the device has blocks for them, no report
    HBM_HEAP_REUSED = 45,            // 31 live, then 100 made and let go one at a time: no report
    TCM_COPY_STATIC = 46,            // tensor_to_tcm into a static array: not dataram on the device
    C_HEAP_MALLOC_NULL = 47,         // malloc of 64 MiB: NULL, as from the device's 10 KiB C heap
    C_HEAP_NEW_PAST = 48,            // new float[4096] (16 KiB): the device's C heap has no room
    C_HEAP_WITHIN = 49,              // vectors of 8000 bytes made and let go 20 times: no report
    NOTHING = 99,                    // no misuse: returns zeros
};

#endif
