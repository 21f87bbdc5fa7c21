// The loop isa_costs.cpp and isa_products.cpp measure an operation in (check_isa.py): over
// TCM buffers, blocks of 256 elements of two inputs to one output.
#pragma once
#include <stddef.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

template <typename T, typename F>
static torch::Tensor over_tcm(const torch::Tensor &a, const torch::Tensor &b, torch::ScalarType dtype, F op)
{
    const size_t block = 256;
    torch::Tensor out = torch::empty(a.sizes(), dtype);
    T *x = static_cast<T *>(torch::neuron::tcm_malloc(block * sizeof(T)));
    T *y = static_cast<T *>(torch::neuron::tcm_malloc(block * sizeof(T)));
    if (x == nullptr || y == nullptr)
        return out;
    auto ta = a.tcm_accessor();
    auto tb = b.tcm_accessor();
    auto to = out.tcm_accessor();
    size_t count = a.numel();
    for (size_t done = 0; done < count; done += block) {
        size_t n = count - done < block ? count - done : block;
        ta.tensor_to_tcm<T>(x, done, n);
        tb.tensor_to_tcm<T>(y, done, n);
        for (size_t k = 0; k < n; k++)
            x[k] = op(x[k], y[k]);
        to.tcm_to_tensor<T>(x, done, n);
    }
    torch::neuron::tcm_free(y);
    torch::neuron::tcm_free(x);
    return out;
}
