/*
 * c10::IntArrayRef: a size list, as the custom-op API's factories and sizes() take and give
 * it, for kernels built on a workstation with the neuron-translate custom-op SDK. C++14.
 *
 * It holds its sizes (at most kMaxDims of them), so a braced list of integers of any
 * kinds converts without a narrowing error, as in ATen and on the device:
 * torch::zeros({n}, ...) with a size_t n, torch::zeros({x.size(0), 4}, ...) (int64_t and
 * int), and a std::vector of sizes all compile. Negative sizes are kept as given; the
 * factories refuse them.
 */
#ifndef NEURON_CUSTOMOP_C10_ARRAY_REF_H
#define NEURON_CUSTOMOP_C10_ARRAY_REF_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include <neuron_customop_host/runtime.h>

namespace c10 {

/// The most dimensions a custom operator's tensor has.
constexpr size_t kMaxDims = NT_CUSTOMOP_MAX_DIMS;

/// Whether every type of a pack is an integer type.
template <class... Ts> struct all_integral : std::true_type {};
template <class T, class... Ts>
struct all_integral<T, Ts...> : std::integral_constant<bool, std::is_integral<T>::value && all_integral<Ts...>::value> {};

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
    /// A braced list of integers of several kinds ({x.size(0), 4}, {n, 2} with a size_t n).
    template <class A, class B, class... Rest,
              class = typename std::enable_if<std::is_integral<A>::value && std::is_integral<B>::value &&
                                              all_integral<Rest...>::value>::type>
    IntArrayRef(A a, B b, Rest... rest)
    {
        const int64_t sizes[] = {static_cast<int64_t>(a), static_cast<int64_t>(b), static_cast<int64_t>(rest)...};
        for (int64_t s : sizes)
            push(s);
    }
    /// One size, as ATen's IntArrayRef converts from one element.
    template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type> IntArrayRef(T one)
    {
        push(static_cast<int64_t>(one));
    }
    /// The sizes a vector holds.
    template <class T, class Alloc, class = typename std::enable_if<std::is_integral<T>::value>::type>
    IntArrayRef(const std::vector<T, Alloc> &sizes) : IntArrayRef(sizes.data(), sizes.size())
    {
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
