// Shape functions of idioms.cpp's kernels.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor row_stats_shape(const torch::Tensor &x) { return torch::zeros({x.size(0), 5}, torch::kFloat); }
torch::Tensor bits_shape(const torch::Tensor &x) { return torch::zeros({x.size(0)}, torch::kInt); }

NEURON_LIBRARY(idioms, m)
{
    m.def("row_stats", &row_stats_shape, "row_stats");
    m.def("bits", &bits_shape, "bits");
}
