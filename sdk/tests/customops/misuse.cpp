// One kernel, one misuse per case, named in misuse_cases.h (check_kernels.py runs each and
// checks the report): what the device leaves undefined, done on purpose.
#include <stdint.h>
#include <stdlib.h>
#include <vector>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>
#include "misuse_cases.h"

static void copy_half(const torch::Tensor &x, torch::Tensor &out, bool own_half)
{
    size_t half = x.numel() / 2, first = own_half ? get_cpu_id() * half : 0;
    float buf[64];
    auto src = x.tcm_accessor();
    auto dst = out.tcm_accessor();
    for (size_t k = first; k < first + half; k += 64) {
        size_t n = first + half - k < 64 ? first + half - k : 64;
        src.tensor_to_tcm<float>(buf, k, n);
        dst.tcm_to_tensor<float>(buf, k, n);
    }
}

static torch::Tensor multicore(const torch::Tensor &x, int64_t which)
{
    torch::Tensor out = get_dst_tensor();
    float v = 0;
    switch (which) {
    case STANDARD_ACCESSOR_MULTICORE: // a standard accessor under several cores
        return (void)x.accessor<float, 2>(), out;
    case CORES_WRITE_SAME: // both cores write every element
        copy_half(x, out, false);
        copy_half(x, out, true);
        return out;
    case CORE_READS_OTHER: // core 1 reads what core 0 writes
        copy_half(x, out, true);
        if (get_cpu_id() == 1)
            out.tcm_accessor().tensor_to_tcm<float>(&v, 0, 1);
        return out;
    default: // ONLY_CORE0_WRITES
        if (get_cpu_id() == 0)
            copy_half(x, out, true);
        return out;
    }
}

// Where a C heap block is kept: a store the compiler must make, so that it calls the
// allocator (a block that does not escape, it may leave out).
static void *volatile kept_block;

torch::Tensor misuse(const torch::Tensor &x, int which)
{
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    torch::Tensor same = x;
    float buf[4];
    switch (which) {
    case STANDARD_ACCESSOR_MULTICORE: case CORES_WRITE_SAME: case CORE_READS_OTHER: case ONLY_CORE0_WRITES:
        return multicore(x, which);
    case INDEX_PAST_END: return (void)(float)x.accessor<float, 2>()[x.size(0)][0], out;
    case ACCESSOR_WRONG_TYPE: return (void)x.accessor<int32_t, 2>(), out;
    case INCOHERENT_ACCESSORS: case INCOHERENT_VERBOSE: case INCOHERENT_QUIET: {
        if (which == INCOHERENT_VERBOSE)
            same.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_VERBOSE);
        if (which == INCOHERENT_QUIET) // allowed, silently
            same.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_QUIET);
        auto s = same.read_stream_accessor<float>();
        auto a = x.accessor<float, 2>();
        return (void)a, out;
    }
    case STREAM_PAST_END: {
        auto s = x.read_stream_accessor<float>();
        for (int64_t k = 0; k <= x.numel(); k++)
            (void)s.read();
        return out;
    }
    case STREAM_AFTER_CLOSE: {
        auto s = out.write_stream_accessor<float>();
        s.close();
        s.write(1.0f);
        return out;
    }
    case FIVE_STREAMS: {
        auto s0 = x.read_stream_accessor<float>(), s1 = x.read_stream_accessor<float>();
        auto s2 = x.read_stream_accessor<float>(), s3 = x.read_stream_accessor<float>();
        auto s4 = x.read_stream_accessor<float>();
        return (void)s4.read(), out;
    }
    case TCM_COPY_PAST_END: return x.tcm_accessor().tensor_to_tcm<float>(buf, x.numel() - 2, 4), out;
    case TCM_FREE_FOREIGN: return torch::neuron::tcm_free(buf), out;
    case RETURNED_OTHER_TENSOR: return torch::zeros({1, 1}, torch::kFloat);
    case MULTICORE_NO_DST: return out; // under several cores, without get_dst_tensor()
    case SIZE_PAST_DIMS: return (void)x.size(2), out; // a 2-dimensional tensor
    case OPERATION_ERROR: return torch::add(x, torch::zeros({1}, torch::kFloat));
    case CRASH: return *static_cast<volatile int *>(nullptr) = 1, out; // a crash
    case TCM_LEAK: return (void)torch::neuron::tcm_malloc(1024), out;     // never freed
    case TCM_STORE_PAST_END: { // 8 floats past the end of a 256-float block
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(256 * sizeof(float)));
        for (int k = 0; k < 264; k++)
            static_cast<volatile float *>(t)[k] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case EMPTY_READ_UNWRITTEN: { // an empty tensor's elements read before anything wrote them
        torch::Tensor t = torch::empty({64}, torch::kFloat);
        t.tcm_accessor().tensor_to_tcm<float>(buf, 2, 4);
        return out;
    }
    case OUTPUT_READ_UNWRITTEN: { // the output's elements read before the kernel wrote them
        torch::Tensor dst = get_dst_tensor();
        dst.tcm_accessor().tensor_to_tcm<float>(buf, 0, 4);
        return dst;
    }
    case EMPTY_READ_WRITTEN: { // the same, read only where written: nothing to report
        torch::Tensor t = torch::empty({64}, torch::kFloat);
        float four[4] = {1, 2, 3, 4};
        t.tcm_accessor().tcm_to_tensor<float>(four, 10, 4);
        t.tcm_accessor().tensor_to_tcm<float>(buf, 10, 4);
        return out;
    }
    case STANDARD_READ_UNWRITTEN: { // an empty tensor's element read through a read-only accessor
        torch::Tensor t = torch::empty({4, 4}, torch::kFloat);
        {
            auto a = t.accessor<float, 2>();
            a[0][0] = 1.0f;
        }
        const torch::Tensor &readonly = t;
        auto r = readonly.accessor<float, 2>();
        return (void)(float)r[0][0], (void)(float)r[1][2], out;
    }
    case TCM_COPY_UNWRITTEN: case TCM_LOAD_UNWRITTEN: case TCM_READ_WRITTEN: { // TCM bytes copied out or loaded before anything wrote
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(256 * sizeof(float)));
        if (which == TCM_READ_WRITTEN) // written first: nothing to report
            for (int k = 0; k < 256; k++)
                t[k] = static_cast<float>(k);
        if (which == TCM_LOAD_UNWRITTEN)
            buf[0] = static_cast<volatile float *>(t)[5];
        else
            out.tcm_accessor().tcm_to_tensor<float>(t, 0, 16);
        return torch::neuron::tcm_free(t), out;
    }
    case FIRST_ROW_ONLY: { // one core: the output's first row written through a standard accessor, no more
        torch::Tensor dst = get_dst_tensor();
        auto a = dst.accessor<float, 2>();
        for (int64_t c = 0; c < dst.size(1); c++)
            a[0][c] = 1.0f;
        return dst;
    }
    case TCM_STORE_PAST_GUARD: { // a store 5000 bytes past the end of a 64-byte block (past its guard pages)
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(64));
        static_cast<volatile float *>(t)[16 + 1250] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case TCM_OVER_BY_1: case TCM_OVER_BY_4: case TCM_OVER_BY_15: { // off the end of 1000 bytes
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(250 * sizeof(float)));
        volatile char *bytes = reinterpret_cast<char *>(t);
        if (which == TCM_OVER_BY_4)
            for (int j = 0; j <= 250; j++)
                static_cast<volatile float *>(t)[j] = 1.0f;
        else
            bytes[which == TCM_OVER_BY_1 ? 1000 : 1014] = 1;
        return torch::neuron::tcm_free(t), out;
    }
    case DIVIDE_BY_ZERO: { // undefined in C++: SIGFPE on the host, a value on the device
        volatile int zero = 0;
        int cols = static_cast<int>(x.size(1));
        return (void)(cols / zero), out;
    }
    case SIGNED_OVERFLOW: { // undefined in C++: the host and the device may give different values
        volatile int big = 100000;
        int square = big * big;
        return (void)square, out;
    }
    case SHIFT_PAST_WIDTH: {
        volatile int by = 32;
        int shifted = 1 << by;
        return (void)shifted, out;
    }
    case FLOAT_TO_INT_OVERFLOW: {
        volatile float huge = 3e9f;
        int truncated = static_cast<int>(huge);
        return (void)truncated, out;
    }
    case MIN_DIVIDED_BY_MINUS_ONE: {
        volatile int least = -2147483647 - 1, minus_one = -1;
        int quotient = least / minus_one;
        return (void)quotient, out;
    }
    case TCM_COPY_PAST_BLOCK: { // a copy of 300 floats into a block of 250: it faults in memcpy
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(250 * sizeof(float)));
        x.tcm_accessor().tensor_to_tcm<float>(t, 0, 300);
        return torch::neuron::tcm_free(t), out;
    }
    case TCM_STORE_BEFORE_BLOCK: { // a store just before a 4096-byte block (a block of whole pages)
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(4096));
        static_cast<volatile float *>(t)[-1] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case ACCESSOR_OUTLIVES_TENSOR: { // the tensor's last handle is given another while the accessor is open
        torch::Tensor t = torch::ones(x.sizes(), torch::kFloat);
        auto a = t.accessor<float, 2>();
        t = torch::zeros(x.sizes(), torch::kFloat);
        return (void)(float)a[0][0], out;
    }
    case TCM_LOAD_FREED: { // a load from a freed block
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(64 * sizeof(float)));
        torch::neuron::tcm_free(t);
        return (void)static_cast<volatile float *>(t)[3], out;
    }
    case HBM_HEAP_33_LIVE: { // out and 32 more: the device's heap has no block for the last
        torch::Tensor kept[32];
        for (int k = 0; k < 32; ++k)
            kept[k] = torch::zeros({4}, torch::kFloat);
        return out;
    }
    case HBM_HEAP_32_LIVE: { // out and 31 more: the last takes the heap's last block whole
        torch::Tensor kept[31];
        for (int k = 0; k < 31; ++k)
            kept[k] = torch::zeros({4}, torch::kFloat);
        return out;
    }
    case HBM_HEAP_REUSED: { // out and 30 more, then each temporary's block given back
        torch::Tensor kept[30];
        for (int k = 0; k < 30; ++k)
            kept[k] = torch::zeros({4}, torch::kFloat);
        for (int k = 0; k < 100; ++k)
            (void)torch::ones({4}, torch::kFloat).numel();
        return out;
    }
    case TCM_COPY_STATIC: { // the device's copy asserts outside dataram
        static float staged[4];
        x.tcm_accessor().tensor_to_tcm<float>(staged, 0, 4);
        return out;
    }
    case C_HEAP_MALLOC_NULL: // NULL, as the device's heap gives: a warning
        kept_block = malloc(64 << 20);
        return out;
    case C_HEAP_NEW_PAST: { // the device throws std::bad_alloc
        float *big = new float[4096];
        kept_block = big;
        delete[] big;
        return out;
    }
    case C_HEAP_WITHIN: // each vector's block given back before the next is made
        for (int k = 0; k < 20; ++k) {
            std::vector<float> v(2000, 1.0f);
            kept_block = v.data();
        }
        return out;
    default: return out;
    }
}
