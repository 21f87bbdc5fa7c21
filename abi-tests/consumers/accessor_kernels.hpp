// The element-wise kernels the accessor tests run, on the host model and on the device under
// qemu: freestanding (no standard library), so that both builds share them.
//
// A kernel over N views of one element type: views 0..N-2 are inputs (Tensor<const T>), the
// last the output; out[i] = mix of the inputs' element i (with one view: v[i] updated in
// place). Three ways to run it:
//   - per_element: one get() per input and one set() per element (the original's way);
//   - accessor: neuron::for_each over all the views;
//   - hand_spans: the hand-written span loop of the README's trap (translate every view
//     once per span, keep the pointers, loop): fast, and stale when the views need more
//     refills than there are reusable windows.
#ifndef ACCESSOR_KERNELS_HPP
#define ACCESSOR_KERNELS_HPP

#include <neuron_translate.hpp>

namespace kernels {

/// splitmix64: the layouts and the data, the same on every build.
struct Rng {
    unsigned long long s;
    unsigned long long next()
    {
        unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// A value below n (n > 0), without a division: the high half of a 32x32 product.
    uint32_t below(uint32_t n)
    {
        unsigned long long r = static_cast<uint32_t>(next() >> 32);
        return static_cast<uint32_t>((r * n) >> 32);
    }
};

/// 12 bytes, 4-aligned: 16 MiB and 4 KiB are not multiples of 12, so elements straddle.
struct S12 {
    uint32_t a, b, c;
};
/// 3 bytes, 1-aligned.
struct P3 {
    unsigned char x[3];
};

inline void fill(uint32_t &v, Rng &r) { v = static_cast<uint32_t>(r.next()); }
inline void fill(unsigned long long &v, Rng &r) { v = r.next(); }
inline void fill(S12 &v, Rng &r)
{
    v.a = static_cast<uint32_t>(r.next());
    v.b = static_cast<uint32_t>(r.next());
    v.c = static_cast<uint32_t>(r.next());
}
inline void fill(P3 &v, Rng &r)
{
    unsigned long long x = r.next();
    for (int k = 0; k < 3; ++k)
        v.x[k] = static_cast<unsigned char>(x >> (8 * k));
}

inline uint32_t mix(uint32_t acc, uint32_t x, uint32_t k) { return acc * 3u + x + k; }
inline unsigned long long mix(unsigned long long acc, unsigned long long x, uint32_t k)
{
    return (acc << 1) + x + k;
}
inline S12 mix(S12 acc, S12 x, uint32_t k) { return {acc.a * 3u + x.a + k, acc.b ^ x.b, acc.c + x.c * 5u}; }
inline P3 mix(P3 acc, P3 x, uint32_t k)
{
    P3 r;
    for (int j = 0; j < 3; ++j)
        r.x[j] = static_cast<unsigned char>(acc.x[j] * 3u + x.x[j] + k + j);
    return r;
}
inline bool same(const uint32_t &a, const uint32_t &b) { return a == b; }
inline bool same(const unsigned long long &a, const unsigned long long &b) { return a == b; }
inline bool same(const S12 &a, const S12 &b) { return a.a == b.a && a.b == b.b && a.c == b.c; }
inline bool same(const P3 &a, const P3 &b) { return a.x[0] == b.x[0] && a.x[1] == b.x[1] && a.x[2] == b.x[2]; }

/// The kernel's value for element i from the inputs' elements (n_in of them, or the
/// element itself when there are none).
template <class T> T combine(const T *in, unsigned n_in, const T &self)
{
    if (n_in == 0)
        return mix(self, self, 1u);
    T acc = in[0];
    for (unsigned k = 1; k < n_in; ++k)
        acc = mix(acc, in[k], k);
    return acc;
}

/// Counts of the accessor's calls: with the views' local pointers, or with bounce copies.
struct Calls {
    unsigned long long direct = 0, bounced = 0;
};

/// The accessor: out[i] = combine(inputs[i]) over the joint stretches.
template <class T, class... In>
bool accessor(const neuron::Tensor<T> &out, Calls &calls, const neuron::Tensor<In> &...in)
{
    return neuron::for_each(
        0, out.size(),
        [&](unsigned long long index, size_t len, const In *...p, T *o) {
            if (neuron::detail::resident(out.ctx(), out.address(index), o))
                ++calls.direct;
            else
                ++calls.bounced;
            for (size_t k = 0; k < len; ++k) {
                T xs[sizeof...(In) + 1] = {p[k]..., o[k]};
                o[k] = combine(xs, sizeof...(In), o[k]);
            }
        },
        in..., out);
}

/// The per-element path: one translate per input element and one per output element.
template <class T, class... In> bool per_element(const neuron::Tensor<T> &out, const neuron::Tensor<In> &...in)
{
    for (unsigned long long i = 0; i < out.size(); ++i) {
        T self{};
        if (!out.load(i, self))
            return false;
        T xs[sizeof...(In) + 1] = {in.get(i)..., self};
        if (!out.set(i, combine(xs, sizeof...(In), self)))
            return false;
    }
    return true;
}

/// The hand-written span loop of c[i] = combine(a[i], b[i], d[i]), as a user would write it
/// from the span API: the output translated first, then each input, the four pointers
/// kept for their shortest span. Right while every window stays resident; stale when a
/// later view's refill replaces an earlier one's window (four views in four regions need
/// four refills, and there are three reusable windows).
inline void hand_spans(const neuron::Tensor<uint32_t> &c, const neuron::Tensor<const uint32_t> &a,
                       const neuron::Tensor<const uint32_t> &b, const neuron::Tensor<const uint32_t> &d)
{
    for (unsigned long long i = 0; i < c.size();) {
        unsigned long long left = c.bytes(c.size() - i), sc = 0, sa = 0, sb = 0, sd = 0;
        uint32_t *pc = static_cast<uint32_t *>(neuron_translate_span(c.ctx(), c.address(i), left, &sc));
        auto *pa = static_cast<const uint32_t *>(neuron_translate_span(a.ctx(), a.address(i), left, &sa));
        auto *pb = static_cast<const uint32_t *>(neuron_translate_span(b.ctx(), b.address(i), left, &sb));
        auto *pd = static_cast<const uint32_t *>(neuron_translate_span(d.ctx(), d.address(i), left, &sd));
        unsigned long long m = sc < sa ? sc : sa;
        m = m < sb ? m : sb;
        m = (m < sd ? m : sd) >> 2;
        if (m == 0)
            return;
        for (unsigned long long k = 0; k < m; ++k) {
            uint32_t xs[4] = {pa[k], pb[k], pd[k], pc[k]};
            pc[k] = combine(xs, 3, pc[k]);
        }
        i += m;
    }
}

/// SoC memory as the environment reaches it outside the windows (the host model's
/// neuron_translate_host_write/read; the qemu program's emulated memory).
struct Soc {
    bool (*write)(unsigned long long soc, const void *src, unsigned long long n);
    bool (*read)(unsigned long long soc, void *dst, unsigned long long n);
};

/// FNV-1a over n bytes, continuing from h.
inline unsigned long long fnv(unsigned long long h, const void *p, unsigned long long n)
{
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (unsigned long long i = 0; i < n; ++i)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

/// The fixed kernels the device and the host both run (the qemu comparison): N views of T
/// at `bases`, `count` elements each, the inputs and the output filled from r; the
/// kernel run per element, the output kept; the views filled again, the kernel run
/// through the accessor; true in `same` if both outputs agree element by element.
/// Returns the FNV-1a hash of the accessor's output.
template <class T, unsigned N>
unsigned long long fixed_kernel(void *ctx, const Soc &soc, const unsigned long long (&bases)[N],
                                unsigned long long count, unsigned long long seed, bool &same_out, Calls &calls)
{
    static_assert(N >= 1 && N <= 5, "one to five views");
    auto fill_all = [&] {
        Rng r{seed};
        for (unsigned v = 0; v < N; ++v)
            for (unsigned long long i = 0; i < count; ++i) {
                T e;
                fill(e, r);
                soc.write(bases[v] + neuron::detail::times<sizeof(T)>(i), &e, sizeof(T));
            }
    };
    using neuron::Tensor;
    using In = Tensor<const T>;
    Tensor<T> out(ctx, bases[N - 1], count);
    auto in = [&](unsigned v) { return In(ctx, bases[v], count); };
    auto run = [&](auto kernel) {
        if constexpr (N == 1)
            return kernel(out);
        else if constexpr (N == 2)
            return kernel(out, in(0));
        else if constexpr (N == 3)
            return kernel(out, in(0), in(1));
        else if constexpr (N == 4)
            return kernel(out, in(0), in(1), in(2));
        else
            return kernel(out, in(0), in(1), in(2), in(3));
    };
    fill_all();
    bool ok = run([&](auto &&o, auto &&...in) { return per_element(o, in...); });
    // The per-element output, hashed and kept in the inputs' absence: element by element.
    unsigned long long want = 0xCBF29CE484222325ull;
    for (unsigned long long i = 0; i < count; ++i) {
        T e;
        soc.read(out.address(i), &e, sizeof(T));
        want = fnv(want, &e, sizeof(T));
    }
    fill_all();
    ok = ok && run([&](auto &&o, auto &&...in) { return accessor(o, calls, in...); });
    unsigned long long got = 0xCBF29CE484222325ull;
    for (unsigned long long i = 0; i < count; ++i) {
        T e;
        soc.read(out.address(i), &e, sizeof(T));
        got = fnv(got, &e, sizeof(T));
    }
    same_out = ok && got == want;
    return got;
}

} // namespace kernels

#endif
