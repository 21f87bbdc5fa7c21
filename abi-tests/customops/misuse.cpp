// One kernel, one misuse per case (abi-tests/tests/sdk_misuse.rs runs each and checks the
// report): what the device leaves undefined, done on purpose.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

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
    case 0: // a standard accessor under several cores
        return (void)x.accessor<float, 2>(), out;
    case 13: // both cores write every element
        copy_half(x, out, false);
        copy_half(x, out, true);
        return out;
    case 14: // core 1 reads what core 0 writes
        copy_half(x, out, true);
        if (get_cpu_id() == 1)
            out.tcm_accessor().tensor_to_tcm<float>(&v, 0, 1);
        return out;
    default: // 15: only core 0 writes
        if (get_cpu_id() == 0)
            copy_half(x, out, true);
        return out;
    }
}

torch::Tensor misuse(const torch::Tensor &x, int64_t which)
{
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    torch::Tensor same = x;
    float buf[4];
    switch (which) {
    case 0: case 13: case 14: case 15:
        return multicore(x, which);
    case 1: return (void)(float)x.accessor<float, 2>()[x.size(0)][0], out;
    case 2: return (void)x.accessor<int32_t, 2>(), out;
    case 3: case 4: case 19: {
        if (which == 4)
            same.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_VERBOSE);
        if (which == 19) // allowed, silently
            same.set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_QUIET);
        auto s = same.read_stream_accessor<float>();
        auto a = x.accessor<float, 2>();
        return (void)a, out;
    }
    case 5: {
        auto s = x.read_stream_accessor<float>();
        for (int64_t k = 0; k <= x.numel(); k++)
            (void)s.read();
        return out;
    }
    case 6: {
        auto s = out.write_stream_accessor<float>();
        s.close();
        s.write(1.0f);
        return out;
    }
    case 7: {
        auto s0 = x.read_stream_accessor<float>(), s1 = x.read_stream_accessor<float>();
        auto s2 = x.read_stream_accessor<float>(), s3 = x.read_stream_accessor<float>();
        auto s4 = x.read_stream_accessor<float>();
        return (void)s4.read(), out;
    }
    case 8: return x.tcm_accessor().tensor_to_tcm<float>(buf, x.numel() - 2, 4), out;
    case 9: return torch::neuron::tcm_free(buf), out;
    case 11: return torch::zeros({1, 1}, torch::kFloat);
    case 12: return out; // under several cores, without get_dst_tensor()
    case 16: return (void)x.size(2), out; // a 2-dimensional tensor
    case 17: return torch::add(x, torch::zeros({1}, torch::kFloat));
    case 18: return *static_cast<volatile int *>(nullptr) = 1, out; // a crash
    case 20: return (void)torch::neuron::tcm_malloc(1024), out;     // never freed
    case 21: { // 8 floats past the end of a 256-float block
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(256 * sizeof(float)));
        for (int k = 0; k < 264; k++)
            static_cast<volatile float *>(t)[k] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case 23: { // an empty tensor's elements read before anything wrote them
        torch::Tensor t = torch::empty({64}, torch::kFloat);
        t.tcm_accessor().tensor_to_tcm<float>(buf, 2, 4);
        return out;
    }
    case 24: { // the output's elements read before the kernel wrote them
        torch::Tensor dst = get_dst_tensor();
        dst.tcm_accessor().tensor_to_tcm<float>(buf, 0, 4);
        return dst;
    }
    case 25: { // the same, read only where written: nothing to report
        torch::Tensor t = torch::empty({64}, torch::kFloat);
        float four[4] = {1, 2, 3, 4};
        t.tcm_accessor().tcm_to_tensor<float>(four, 10, 4);
        t.tcm_accessor().tensor_to_tcm<float>(buf, 10, 4);
        return out;
    }
    case 26: { // an empty tensor's element read through a read-only accessor (--sanitize)
        torch::Tensor t = torch::empty({4, 4}, torch::kFloat);
        {
            auto a = t.accessor<float, 2>();
            a[0][0] = 1.0f;
        }
        const torch::Tensor &readonly = t;
        auto r = readonly.accessor<float, 2>();
        return (void)r[0][0], (void)r[1][2], out;
    }
    case 27: case 28: case 29: { // TCM bytes copied out (27) or loaded (28) before anything wrote
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(256 * sizeof(float)));
        if (which == 29) // written first: nothing to report
            for (int k = 0; k < 256; k++)
                t[k] = static_cast<float>(k);
        if (which == 28)
            buf[0] = static_cast<volatile float *>(t)[5];
        else
            out.tcm_accessor().tcm_to_tensor<float>(t, 0, 16);
        return torch::neuron::tcm_free(t), out;
    }
    case 32: { // one core: the output's first row written through a standard accessor, no more
        torch::Tensor dst = get_dst_tensor();
        auto a = dst.accessor<float, 2>();
        for (int64_t c = 0; c < dst.size(1); c++)
            a[0][c] = 1.0f;
        return dst;
    }
    case 30: { // a store 5000 bytes past the end of a 64-byte block (past its guard pages)
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(64));
        static_cast<volatile float *>(t)[16 + 1250] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case 31: { // a store just before a 4096-byte block (a block of whole pages)
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(4096));
        static_cast<volatile float *>(t)[-1] = 1.0f;
        return torch::neuron::tcm_free(t), out;
    }
    case 22: { // a load from a freed block
        float *t = static_cast<float *>(torch::neuron::tcm_malloc(64 * sizeof(float)));
        torch::neuron::tcm_free(t);
        return (void)static_cast<volatile float *>(t)[3], out;
    }
    default: return out;
    }
}
