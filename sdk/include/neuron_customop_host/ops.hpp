/*
 * The factories and operations of <torch/torch.h>, in namespace at (torch:: names them
 * too). Each operation has two forms: op(args...) returns a new tensor, op_out(result,
 * args...) writes into result and returns it. Operands have one shape (no broadcasting);
 * docs/customop-host.md tables the element types each takes and gives. The runtime does
 * the work and reports a refusal (operation-error) with the operation and the shapes. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_OPS_HPP
#define NEURON_CUSTOMOP_HOST_OPS_HPP

#include <neuron_customop_host/tensor.hpp>

namespace nt_customop {

inline nt_customop_arg arg(const at::Tensor &t)
{
    nt_customop_arg a = {NT_CUSTOMOP_ARG_TENSOR, t.nt_meta(), 0, 0.0};
    return a;
}
inline nt_customop_arg arg(const c10::Scalar &s) { return s.arg(); }
inline nt_customop_arg arg(const nt_customop_arg &a) { return a; }
inline nt_customop_arg none()
{
    nt_customop_arg a = {NT_CUSTOMOP_ARG_NONE, nullptr, 0, 0.0};
    return a;
}

// The calls that make a tensor pass their return address, which the emulated Q7's
// runtime sends to place a report at the author's line (a kernel's tensor the device's
// heap has no block for): so they are not inlined into the factories and operations,
// which are inlined into the kernel.
#if defined(__GNUC__)
#define NT_CUSTOMOP_SITED __attribute__((noinline))
#define NT_CUSTOMOP_SITE __builtin_return_address(0)
#else
#define NT_CUSTOMOP_SITED
#define NT_CUSTOMOP_SITE nullptr
#endif

/// op on up to three operands into a new tensor.
template <class A, class B = nt_customop_arg, class C = nt_customop_arg>
NT_CUSTOMOP_SITED at::Tensor apply(int op, const A &a, const B &b = none(), const C &c = none())
{
    nt_customop_arg args[3] = {arg(a), arg(b), arg(c)};
    return adopt(nt_customop_apply(op, nullptr, args, NT_CUSTOMOP_SITE));
}
/// The same into out.
template <class A, class B = nt_customop_arg, class C = nt_customop_arg>
at::Tensor &apply_out(int op, at::Tensor &out, const A &a, const B &b = none(), const C &c = none())
{
    nt_customop_arg args[3] = {arg(a), arg(b), arg(c)};
    nt_customop_apply(op, out.nt_meta(), args, nullptr);
    return out;
}

NT_CUSTOMOP_SITED inline at::Tensor make(c10::IntArrayRef size, const c10::TensorOptions &options, int fill,
                                         const c10::Scalar &value = c10::Scalar())
{
    nt_customop_arg v = value.arg();
    int dtype = options.has_dtype() ? static_cast<int>(options.dtype()) : -1;
    // More than eight sizes: -1 sizes, which the runtime refuses by name.
    int64_t bad[1] = {-1};
    const int64_t *sizes = size.too_long() ? bad : size.data();
    size_t n = size.too_long() ? 1 : size.size();
    return adopt(nt_customop_tensor_new(dtype, sizes, n, fill, &v, NT_CUSTOMOP_SITE));
}

} // namespace nt_customop

namespace at {

using c10::Scalar;

// Factories: the element type must be given (torch::kFloat converts to options).
inline Tensor empty(c10::IntArrayRef size, const c10::TensorOptions &o) { return nt_customop::make(size, o, NT_CUSTOMOP_FILL_EMPTY); }
inline Tensor zeros(c10::IntArrayRef size, const c10::TensorOptions &o) { return nt_customop::make(size, o, NT_CUSTOMOP_FILL_ZEROS); }
inline Tensor ones(c10::IntArrayRef size, const c10::TensorOptions &o) { return nt_customop::make(size, o, NT_CUSTOMOP_FILL_ONES); }
inline Tensor full(c10::IntArrayRef size, const c10::Scalar &fill_value, const c10::TensorOptions &o)
{
    return nt_customop::make(size, o, NT_CUSTOMOP_FILL_VALUE, fill_value);
}
inline Tensor eye(int64_t n, int64_t m, const c10::TensorOptions &o) { return nt_customop::make({n, m}, o, NT_CUSTOMOP_FILL_EYE); }
inline Tensor eye(int64_t n, const c10::TensorOptions &o) { return eye(n, n, o); }

// The operations, as runtime.h lists them by form (generated from the runtime's codes).
#define NT_CUSTOMOP_UNARY(name, code)                                                                            \
    inline Tensor name(const Tensor &self) { return nt_customop::apply(code, self); }                          \
    inline Tensor &name##_out(Tensor &out, const Tensor &self) { return nt_customop::apply_out(code, out, self); }
NT_CUSTOMOP_UNARY_OPS(NT_CUSTOMOP_UNARY)
#undef NT_CUSTOMOP_UNARY

// Two operands: tensor x tensor, tensor x scalar (and, where listed, scalar x tensor).
#define NT_CUSTOMOP_BINARY(name, code, A, B)                                                                     \
    inline Tensor name(const A &a, const B &b) { return nt_customop::apply(code, a, b); }                      \
    inline Tensor &name##_out(Tensor &out, const A &a, const B &b) { return nt_customop::apply_out(code, out, a, b); }
NT_CUSTOMOP_BINARY_OPS(NT_CUSTOMOP_BINARY)
#undef NT_CUSTOMOP_BINARY

// self + alpha * other and self - alpha * other.
#define NT_CUSTOMOP_ALPHA(name, code, B)                                                                         \
    inline Tensor name(const Tensor &self, const B &other, const Scalar &alpha = 1)                            \
    {                                                                                                          \
        return nt_customop::apply(code, self, other, alpha);                                                   \
    }                                                                                                          \
    inline Tensor &name##_out(Tensor &out, const Tensor &self, const B &other, const Scalar &alpha = 1)        \
    {                                                                                                          \
        return nt_customop::apply_out(code, out, self, other, alpha);                                          \
    }
NT_CUSTOMOP_ALPHA_OPS(NT_CUSTOMOP_ALPHA)
#undef NT_CUSTOMOP_ALPHA

// op(self, min, max).
#define NT_CUSTOMOP_CLAMP(name, code)                                                                            \
    inline Tensor name(const Tensor &self, const Scalar &min, const Scalar &max)                               \
    {                                                                                                          \
        return nt_customop::apply(code, self, min, max);                                                       \
    }                                                                                                          \
    inline Tensor &name##_out(Tensor &out, const Tensor &self, const Scalar &min, const Scalar &max)           \
    {                                                                                                          \
        return nt_customop::apply_out(code, out, self, min, max);                                              \
    }
NT_CUSTOMOP_CLAMP_OPS(NT_CUSTOMOP_CLAMP)
#undef NT_CUSTOMOP_CLAMP

} // namespace at

#endif /* NEURON_CUSTOMOP_HOST_OPS_HPP */
