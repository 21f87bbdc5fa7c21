// Shape functions and registration for sizes.cpp.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor joined_shape(torch::Tensor a, torch::Tensor b) { return torch::empty({a.size(0) + b.size(0)}, torch::kFloat); }
torch::Tensor products_shape(torch::Tensor a, torch::Tensor b) { return torch::empty({a.size(0) * b.size(0)}, torch::kFloat); }
torch::Tensor first_sixteen_shape(torch::Tensor a) { return torch::empty({a.size(0) < 16 ? a.size(0) : 16}, torch::kFloat); }

NEURON_LIBRARY(sizes_ops, m)
{
    m.def("joined", &joined_shape, "joined");
    m.def("products", &products_shape, "products");
    m.def("first_sixteen", &first_sixteen_shape, "first_sixteen");
}
