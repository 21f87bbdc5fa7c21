/*
 * c10::Scalar: a number given to a factory or an operation, integral or floating. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_SCALAR_HPP
#define NEURON_CUSTOMOP_HOST_SCALAR_HPP

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <neuron_customop_host/runtime.h>

#include <type_traits>

namespace c10 {

class Scalar {
  public:
    Scalar() : Scalar(int64_t(0)) {}
    /// From any integer type (bool too): an integral scalar.
    template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
    Scalar(T v) : integral_(true), i_(static_cast<int64_t>(v)), d_(static_cast<double>(v))
    {
    }
    /// From float or double: a floating scalar (converted to an integer only when asked:
    /// a NaN, an infinity or a value past int64_t has no integer, and converting it is
    /// undefined, which the kernels' checks report at the line that asks).
    template <class T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
    Scalar(T v) : integral_(false), i_(0), d_(static_cast<double>(v))
    {
    }
    Scalar(Half v) : Scalar(static_cast<float>(v)) {}
    Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}

    bool isIntegral(bool include_bool = true) const { return (void)include_bool, integral_; }
    bool isFloatingPoint() const { return !integral_; }
    int64_t toLong() const { return integral_ ? i_ : static_cast<int64_t>(d_); }
    int toInt() const { return integral_ ? static_cast<int>(i_) : static_cast<int>(d_); }
    double toDouble() const { return d_; }
    float toFloat() const { return static_cast<float>(d_); }

    /// As the runtime takes it.
    nt_customop_arg arg() const
    {
        nt_customop_arg a = {integral_ ? NT_CUSTOMOP_ARG_SCALAR_INT : NT_CUSTOMOP_ARG_SCALAR_FLOAT, nullptr, i_, d_};
        return a;
    }

  private:
    bool integral_;
    int64_t i_;
    double d_;
};

} // namespace c10

#endif /* NEURON_CUSTOMOP_HOST_SCALAR_HPP */
