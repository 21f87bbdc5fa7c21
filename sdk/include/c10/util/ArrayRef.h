/*
 * c10::IntArrayRef: a size list, as the custom-op API's factories and sizes() take and give
 * it, for kernels built on a workstation with the neuron-translate custom-op SDK. C++14.
 *
 * It holds its sizes (at most kMaxDims of them), so a braced list of any one integer type
 * converts without a narrowing error: torch::zeros({n}, ...) with a size_t n, as the
 * public guide writes it, compiles. Negative sizes are kept as given; the factories
 * refuse them.
 */
#ifndef NEURON_CUSTOMOP_C10_ARRAY_REF_H
#define NEURON_CUSTOMOP_C10_ARRAY_REF_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace c10 {

/// The most dimensions a custom operator's tensor has.
constexpr size_t kMaxDims = 8;

class IntArrayRef {
  public:
    IntArrayRef() = default;
    /// A list of one integer type; more than kMaxDims sizes keeps the first kMaxDims and
    /// remembers that it was longer (too_long()), for the factories to refuse.
    template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
    IntArrayRef(std::initializer_list<T> sizes)
    {
        for (T s : sizes)
            push(static_cast<int64_t>(s));
    }
    /// n sizes from `data`.
    template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>
    IntArrayRef(const T *data, size_t n)
    {
        for (size_t k = 0; k < n; ++k)
            push(static_cast<int64_t>(data[k]));
    }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    bool too_long() const { return too_long_; }
    const int64_t *begin() const { return sizes_; }
    const int64_t *end() const { return sizes_ + n_; }
    const int64_t *data() const { return sizes_; }
    int64_t operator[](size_t k) const { return sizes_[k]; }

    friend bool operator==(const IntArrayRef &a, const IntArrayRef &b)
    {
        if (a.n_ != b.n_ || a.too_long_ != b.too_long_)
            return false;
        for (size_t k = 0; k < a.n_; ++k)
            if (a.sizes_[k] != b.sizes_[k])
                return false;
        return true;
    }
    friend bool operator!=(const IntArrayRef &a, const IntArrayRef &b) { return !(a == b); }

  private:
    void push(int64_t s)
    {
        if (n_ == kMaxDims)
            too_long_ = true;
        else
            sizes_[n_++] = s;
    }

    int64_t sizes_[kMaxDims] = {};
    size_t n_ = 0;
    bool too_long_ = false;
};

} // namespace c10

#endif /* NEURON_CUSTOMOP_C10_ARRAY_REF_H */
