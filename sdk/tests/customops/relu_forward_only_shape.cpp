// A second library named relu_ops that defines relu_forward only (relu.cpp's kernel): loaded
// after relu_shape.cpp's, its relu_forward replaces the first's and relu_backward stays
// (sdk/python/torch_tests).
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_forward_shape(const torch::Tensor &t_in) { return torch::zeros(t_in.sizes(), t_in.scalar_type()); }

NEURON_LIBRARY(relu_ops, m) { m.def("relu_forward", &relu_forward_shape, "relu_forward"); }
