// The shape function for misuse.cpp; case 10 reads its input's data, which a shape
// function never has.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor misuse_shape(const torch::Tensor &x, int64_t which)
{
    if (which == 10)
        (void)x.accessor<float, 2>();
    return torch::empty(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(misuse_ops, m) { m.def("misuse", &misuse_shape, "misuse"); }
