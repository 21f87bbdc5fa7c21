// Shape function and registration for device_model.cpp.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor device_model_shape(torch::Tensor t)
{
    (void)t;
    return torch::empty({6}, torch::kFloat);
}

torch::Tensor data_model_shape(torch::Tensor t)
{
    (void)t;
    return torch::empty({11}, torch::kInt);
}

torch::Tensor invalid_nan_shape(torch::Tensor t)
{
    (void)t;
    return torch::empty({2}, torch::kFloat);
}

NEURON_LIBRARY(device_model_ops, m)
{
    m.def("invalid_nan", &invalid_nan_shape, "invalid_nan");
    m.def("device_model", &device_model_shape, "device_model");
    m.def("data_model", &data_model_shape, "data_model");
}
