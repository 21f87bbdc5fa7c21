// Ops named like attributes of the Python package's Library (`empty`, `close`), for
// failures.cpp's kernels: the package warns at load and keeps them reachable as
// lib.ops["empty"] (sdk/python/tests/test_memory.py).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(const torch::Tensor &input) { return torch::zeros(input.sizes(), torch::kFloat); }

NEURON_LIBRARY(shadowed, m)
{
    m.def("empty", &same_shape, "passes");
    m.def("close", &same_shape, "passes");
    m.def("passes", &same_shape, "passes");
}
