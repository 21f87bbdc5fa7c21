// The shape function of parity.cpp's kernel.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor parity_shape(torch::Tensor x) { return torch::zeros({x.size(0)}, torch::kFloat); }

NEURON_LIBRARY(parity, m) { m.def("parity", &parity_shape, "parity"); }
