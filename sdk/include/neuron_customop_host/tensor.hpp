/*
 * at::Tensor (torch::Tensor): a handle on storage in the host model's HBM. A copy shares
 * the storage, as in ATen; kernels make tensors with the factories (ops.hpp), never with
 * a constructor. Its accessors are in accessors.hpp. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_TENSOR_HPP
#define NEURON_CUSTOMOP_HOST_TENSOR_HPP

#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/ArrayRef.h>
#include <neuron_customop_host/scalar.hpp>

namespace at {
class Tensor;
template <class T, size_t N, bool ReadOnly> class TensorAccessor;
template <class T> class TensorReadStreamAccessor;
template <class T> class TensorWriteStreamAccessor;
template <bool ReadOnly> class TensorTcmAccessor;

/// Which accessors may be open together on a tensor, and what happens when they are not.
struct CoherencyEnforcer {
    enum Policy {
        COHERENT = NT_CUSTOMOP_POLICY_COHERENT,                     // an incoherent access is an error (the default)
        INCOHERENT_VERBOSE = NT_CUSTOMOP_POLICY_INCOHERENT_VERBOSE, // allowed, with a warning
        INCOHERENT_QUIET = NT_CUSTOMOP_POLICY_INCOHERENT_QUIET,     // allowed, silently
    };
};
} // namespace at

namespace c10 {
/// A tensor's data as the device's library hands it by value (`q7_data_ptr()`): its SoC
/// address, the translation context and whether it is null; 16 bytes, as on the device.
struct Q7PtrType {
    uint64_t hbm_addr;
    void *ctx_ptr;
    bool is_nullptr;
    explicit operator bool() const { return !is_nullptr; }
};
} // namespace c10

namespace nt_customop {
/// Adopts a tensor the runtime returned with one reference.
at::Tensor adopt(const nt_customop_meta *m);
} // namespace nt_customop

namespace at {

class Tensor {
  public:
    /// An undefined tensor (no storage).
    Tensor() = default;
    Tensor(const Tensor &o) : m_(o.m_)
    {
        if (m_)
            nt_customop_tensor_retain(m_);
    }
    Tensor(Tensor &&o) noexcept : m_(o.m_) { o.m_ = nullptr; }
    Tensor &operator=(const Tensor &o)
    {
        Tensor copy(o);
        swap(copy);
        return *this;
    }
    Tensor &operator=(Tensor &&o) noexcept
    {
        Tensor moved(static_cast<Tensor &&>(o));
        swap(moved);
        return *this;
    }
    ~Tensor()
    {
        if (m_)
            nt_customop_tensor_release(m_);
    }

    bool defined() const { return m_ != nullptr; }
    int64_t numel() const { return static_cast<int64_t>(m_->numel); }
    int64_t dim() const { return m_->ndim; }
    c10::IntArrayRef sizes() const { return c10::IntArrayRef(m_->sizes, m_->ndim); }
    /// Size of dimension d (negative d counts from the end); another d is reported.
    int64_t size(int64_t d) const
    {
        int64_t k = dimension(d);
        return k < 0 ? 0 : m_->sizes[k];
    }
    /// Elements between neighbours in each dimension (C order: the device's tensors are
    /// contiguous).
    c10::IntArrayRef strides() const { return c10::IntArrayRef(m_->strides, m_->ndim); }
    /// Stride of dimension d (negative d counts from the end); another d is reported.
    int64_t stride(int64_t d) const
    {
        int64_t k = dimension(d);
        return k < 0 ? 0 : m_->strides[k];
    }
    c10::ScalarType scalar_type() const { return static_cast<c10::ScalarType>(m_->dtype); }
    size_t element_size() const { return c10::elementSize(scalar_type()); }
    /// Sets every element to v (converted to the element type); returns the tensor.
    Tensor &fill_(const c10::Scalar &v)
    {
        nt_customop_arg a = v.arg();
        nt_customop_tensor_fill(m_, &a);
        return *this;
    }
    const Tensor &fill_(const c10::Scalar &v) const
    {
        const_cast<Tensor *>(this)->fill_(v);
        return *this;
    }

    void set_accessor_coherence_policy(CoherencyEnforcer::Policy p) const { nt_customop_policy(m_, p); }
    CoherencyEnforcer::Policy get_accessor_coherence_policy() const
    {
        return static_cast<CoherencyEnforcer::Policy>(nt_customop_policy(m_, -1));
    }

    /// Element access, a translate per element (read-only from a const tensor). As on the
    /// device, no accessor opens on a temporary tensor (the `&&` overloads are deleted):
    /// `torch::ones(...).accessor<float, 1>()` does not compile.
    template <class T, size_t N> TensorAccessor<T, N, false> accessor() &;
    template <class T, size_t N> TensorAccessor<T, N, true> accessor() const &;
    template <class T, size_t N> TensorAccessor<T, N, false> accessor() && = delete;
    template <class T> TensorReadStreamAccessor<T> read_stream_accessor() const &;
    template <class T> TensorReadStreamAccessor<T> read_stream_accessor() && = delete;
    template <class T> TensorWriteStreamAccessor<T> write_stream_accessor() &;
    template <class T> TensorWriteStreamAccessor<T> write_stream_accessor() && = delete;
    TensorTcmAccessor<false> tcm_accessor() &;
    TensorTcmAccessor<true> tcm_accessor() const &;
    TensorTcmAccessor<false> tcm_accessor() && = delete;

    /// The runtime's view (for the SDK's own headers).
    const nt_customop_meta *nt_meta() const { return m_; }
    /// The data's SoC address and translation context, for neuron_memcpy (the device
    /// library's by-value Q7PtrType; its operator[] is not given here).
    c10::Q7PtrType q7_data_ptr() const;

  private:
    /// Dimension d (negative d counts from the end) as an index, or -1 for one the tensor
    /// does not have (reported, as the device's check of it is).
    int64_t dimension(int64_t d) const
    {
        int64_t n = m_->ndim, k = d < 0 ? d + n : d;
        if (k < 0 || k >= n) {
            nt_customop_bad_index(m_, -1, d, n);
            return -1;
        }
        return k;
    }
    friend Tensor nt_customop::adopt(const nt_customop_meta *m);
    void swap(Tensor &o)
    {
        const nt_customop_meta *t = m_;
        m_ = o.m_;
        o.m_ = t;
    }
    const nt_customop_meta *m_ = nullptr;
};

} // namespace at

namespace nt_customop {
inline at::Tensor adopt(const nt_customop_meta *m)
{
    at::Tensor t;
    t.m_ = m;
    return t;
}
} // namespace nt_customop

#endif /* NEURON_CUSTOMOP_HOST_TENSOR_HPP */
