/*
 * c10::TensorOptions: what a factory is told about the tensor it makes, for kernels built
 * on a workstation with the neuron-translate custom-op SDK. Only the element type matters
 * to a custom operator, and it must be given: torch::kFloat converts to options. C++14.
 */
#ifndef NEURON_CUSTOMOP_C10_TENSOR_OPTIONS_H
#define NEURON_CUSTOMOP_C10_TENSOR_OPTIONS_H

#include <c10/core/ScalarType.h>

namespace c10 {

class TensorOptions {
  public:
    TensorOptions() = default;
    /// Options with this element type (an implicit conversion: zeros({n}, torch::kInt)).
    TensorOptions(ScalarType t) : dtype_(t), has_dtype_(true) {}

    /// These options with the element type `t`.
    TensorOptions dtype(ScalarType t) const
    {
        TensorOptions o(*this);
        o.dtype_ = t;
        o.has_dtype_ = true;
        return o;
    }
    /// The element type (kFloat when none was given: has_dtype() says).
    ScalarType dtype() const { return dtype_; }
    bool has_dtype() const { return has_dtype_; }

  private:
    ScalarType dtype_ = kFloat;
    bool has_dtype_ = false;
};

} // namespace c10

#endif /* NEURON_CUSTOMOP_C10_TENSOR_OPTIONS_H */
