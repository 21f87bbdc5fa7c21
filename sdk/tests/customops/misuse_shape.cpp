// The shape function for misuse.cpp; SHAPE_READS_DATA reads its input's data, which a shape
// function never has.
#include <torch/torch.h>
#include "torchneuron/register.h"
#include "misuse_cases.h"

torch::Tensor misuse_shape(const torch::Tensor &x, int64_t which)
{
    if (which == SHAPE_READS_DATA)
        (void)x.accessor<float, 2>();
    return torch::empty(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(misuse_ops, m) { m.def("misuse", &misuse_shape, "misuse"); }
