// A registration a device loader refuses: one op name defined twice, with different shape
// functions and kernels (for failures.cpp).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(const torch::Tensor &input) { return torch::zeros(input.sizes(), torch::kFloat); }
torch::Tensor other_shape(const torch::Tensor &) { return torch::zeros({1}, torch::kFloat); }

NEURON_LIBRARY(twice, m)
{
    m.def("passes", &same_shape, "passes");
    m.def("passes", &other_shape, "kernel_exits");
}
