/*
 * "torchneuron/register.h" of the neuron-translate custom-op SDK: NEURON_LIBRARY(lib, m)
 * { m.def("op", &shape_fn, "kernel_fn"); } registers each op of a library (at most 10)
 * with its shape function and the name of its kernel, for the runner (ntx op run). C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_REGISTER_H
#define NEURON_CUSTOMOP_HOST_REGISTER_H

#include <torch/torch.h>
#include <neuron_customop_host/bind.hpp>

#define NEURON_LIBRARY(lib, m)                                                                                 \
    static void nt_customop_library_##lib(::nt_customop::Library &);                                           \
    static const ::nt_customop::Registrar nt_customop_registrar_##lib(#lib, &nt_customop_library_##lib);       \
    static void nt_customop_library_##lib(::nt_customop::Library &m)

#endif /* NEURON_CUSTOMOP_HOST_REGISTER_H */
