// Two NEURON_LIBRARY blocks in one program, which a device loader refuses (for
// failures.cpp).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(const torch::Tensor &input) { return torch::zeros(input.sizes(), torch::kFloat); }

NEURON_LIBRARY(first_library, m) { m.def("passes", &same_shape, "passes"); }

NEURON_LIBRARY(second_library, m) { m.def("spin", &same_shape, "spin"); }
