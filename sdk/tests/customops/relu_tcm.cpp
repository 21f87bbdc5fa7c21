// relu through the TCM accessor: blocks of 1024 elements copied to a TCM buffer and back,
// on one core (relu_tcm) or on every core, each its own slice of the output
// (relu_multicore: the last core takes the remainder, at the right offset).
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

static void relu_range(const torch::Tensor &in, torch::Tensor &out, size_t first, size_t count)
{
    const size_t block = 1024;
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(block * sizeof(float)));
    if (buf == nullptr)
        return;
    auto src = in.tcm_accessor();
    auto dst = out.tcm_accessor();
    for (size_t done = 0; done < count; done += block) {
        size_t n = count - done < block ? count - done : block;
        src.tensor_to_tcm<float>(buf, first + done, n);
        for (size_t k = 0; k < n; k++)
            buf[k] = buf[k] > 0.0f ? buf[k] : 0.0f;
        dst.tcm_to_tensor<float>(buf, first + done, n);
    }
    torch::neuron::tcm_free(buf);
}

torch::Tensor relu_tcm(const torch::Tensor &input)
{
    torch::Tensor out = torch::empty(input.sizes(), torch::kFloat);
    relu_range(input, out, 0, input.numel());
    return out;
}

torch::Tensor relu_multicore(const torch::Tensor &input)
{
    torch::Tensor out = get_dst_tensor();
    size_t n = input.numel(), cores = get_cpu_count(), id = get_cpu_id();
    size_t share = n / cores;
    size_t first = share * id;
    size_t count = id == cores - 1 ? n - first : share;
    relu_range(input, out, first, count);
    return out;
}
