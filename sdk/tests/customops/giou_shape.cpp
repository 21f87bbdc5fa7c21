// Shape function and registration for giou.cpp: one loss per pair of boxes.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor giou_shape(const torch::Tensor &a, const torch::Tensor &)
{
    return torch::zeros({a.size(0)}, torch::kFloat);
}

NEURON_LIBRARY(giou_ops, m) { m.def("giou_multicore", &giou_shape, "giou_multicore"); }
