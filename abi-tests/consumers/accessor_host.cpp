// neuron_translate.hpp on the host model (abi-tests/tests/accessor.rs builds and runs it):
//
//  1. randomised layouts: one to five views of one element type (uint32_t, 64-bit,
//     a 12-byte and a 3-byte struct), placed across 16 MiB window boundaries, some at a
//     base not aligned to the element, some in the pinned HBM scratch window; for each,
//     the kernel run per element (get/set) and through neuron::for_each, both checked
//     element by element against the values computed from the inputs in local memory,
//     and a bulk copy_out/copy_in round trip;
//  2. the stale-pointer hazard: the hand-written span loop over four views in four
//     regions gives wrong elements, the accessor on the same layout none.
//
// Prints one line per part; exits 0 only if every check holds. A seed may be given as
// the first argument (default 1). With --fixed instead, runs only the fixed kernels of
// accessor_fixed.hpp and prints their hashes, as the device program does under qemu.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "accessor_fixed.hpp"
#include "accessor_kernels.hpp"

namespace extended_isa { namespace sdk { unsigned long long hbm_scratch; } }

namespace {

using kernels::Rng;

constexpr unsigned long long kEngineBase = 0x5002900000ull;
constexpr unsigned long long kHbmBase = 0x4000000000ull;
constexpr unsigned long long kHbmSize = 1ull << 30;
constexpr unsigned long long kWindow = 16ull << 20;
constexpr unsigned long long kPinned = 64ull << 20; // the HBM scratch window, at the end
constexpr unsigned kMaxViews = 5;
constexpr unsigned kLayouts = 160;

struct Totals {
    kernels::Calls calls;
    unsigned long long layouts = 0, elements = 0, pinned = 0, misaligned = 0;
};

bool soc_write(unsigned long long soc, const void *p, unsigned long long n)
{
    return neuron_translate_host_write(soc, p, n) == 0;
}
bool soc_read(unsigned long long soc, void *p, unsigned long long n)
{
    return neuron_translate_host_read(soc, p, n) == 0;
}

void report(const char *name, unsigned long long hash, bool same, const kernels::Calls &)
{
    std::printf("fixed %s 0x%016llx %s\n", name, hash, same ? "same" : "DIFFER");
}

/// Compares count elements at soc with want; prints the first difference.
template <class T> bool check(const char *what, unsigned long long soc, const std::vector<T> &want)
{
    std::vector<T> got(want.size());
    if (!soc_read(soc, got.data(), got.size() * sizeof(T)))
        return false;
    for (size_t i = 0; i < want.size(); ++i)
        if (!kernels::same(got[i], want[i])) {
            std::printf("%s: element %zu of %zu differs\n", what, i, want.size());
            return false;
        }
    return true;
}

/// Runs `kernel` on views with bases `bases`, count elements each, and checks the output.
template <class T, class Kernel>
bool run_kernel(const char *what, const unsigned long long *bases, unsigned n, unsigned long long count,
                const std::vector<std::vector<T>> &data, const std::vector<T> &want, Kernel kernel)
{
    for (unsigned v = 0; v < n; ++v)
        if (!soc_write(bases[v], data[v].data(), count * sizeof(T)))
            return false;
    if (!kernel())
        return std::printf("%s: the walk failed\n", what), false;
    return check(what, bases[n - 1], want);
}

/// Calls f with n views (inputs const, the last writable) of count elements at bases.
template <class T, class F> bool with_views(unsigned n, const unsigned long long *b, unsigned long long count, F f)
{
    using neuron::Tensor;
    using In = Tensor<const T>;
    Tensor<T> out(b[n - 1], count);
    switch (n) {
    case 1: return f(out);
    case 2: return f(out, In(b[0], count));
    case 3: return f(out, In(b[0], count), In(b[1], count));
    case 4: return f(out, In(b[0], count), In(b[1], count), In(b[2], count));
    default: return f(out, In(b[0], count), In(b[1], count), In(b[2], count), In(b[3], count));
    }
}

/// Places n views: each in a 32 MiB stretch of its own, crossing the 16 MiB boundary in
/// its middle, or (sometimes one of them) inside the pinned window; bases sometimes not
/// aligned to the element.
template <class T> void place(Rng &r, unsigned n, unsigned long long count, unsigned long long *bases, Totals &t)
{
    const unsigned long long bytes = count * sizeof(T);
    const unsigned slots = static_cast<unsigned>((kHbmSize - kPinned) / (2 * kWindow));
    unsigned used[kMaxViews];
    int pinned = r.below(4) == 0 ? static_cast<int>(r.below(n)) : -1;
    for (unsigned v = 0; v < n; ++v) {
        unsigned misalign = (alignof(T) > 1 && r.below(3) == 0) ? 1 + r.below(alignof(T) - 1) : 0;
        t.misaligned += misalign != 0;
        if (static_cast<int>(v) == pinned) {
            bases[v] = kHbmBase + kHbmSize - kPinned + r.below(static_cast<uint32_t>(kPinned - bytes - 8)) + misalign;
            ++t.pinned;
            continue;
        }
        unsigned s;
        bool again;
        do {
            s = r.below(slots);
            again = false;
            for (unsigned u = 0; u < v; ++u)
                again = again || used[u] == s;
        } while (again);
        used[v] = s;
        unsigned long long boundary = kHbmBase + s * 2 * kWindow + kWindow;
        bases[v] = boundary - r.below(static_cast<uint32_t>(bytes)) - 8 + misalign;
    }
}

/// One random layout of element type T: the per-element path, the accessor, a bulk round trip.
template <class T> bool layout(Rng &r, Totals &t)
{
    const unsigned n = 1 + r.below(kMaxViews);
    const unsigned long long count = 1 + r.below(2000);
    unsigned long long bases[kMaxViews];
    place<T>(r, n, count, bases, t);
    std::vector<std::vector<T>> data(n, std::vector<T>(count));
    for (auto &d : data)
        for (auto &e : d)
            kernels::fill(e, r);
    std::vector<T> want(count);
    for (unsigned long long i = 0; i < count; ++i) {
        T xs[kMaxViews];
        for (unsigned v = 0; v < n; ++v)
            xs[v] = data[v][i];
        want[i] = kernels::combine(xs, n - 1, data[n - 1][i]);
    }
    auto per_element = [&](auto &&out, auto &&...in) { return kernels::per_element(out, in...); };
    auto accessor = [&](auto &&out, auto &&...in) { return kernels::accessor(out, t.calls, in...); };
    bool ok = run_kernel("per element", bases, n, count, data, want,
                         [&] { return with_views<T>(n, bases, count, per_element); }) &&
              run_kernel("accessor", bases, n, count, data, want,
                         [&] { return with_views<T>(n, bases, count, accessor); });
    // copy_out of a random part of the output, changed, copied back with copy_in.
    neuron::Tensor<T> out(bases[n - 1], count);
    unsigned long long first = r.below(static_cast<uint32_t>(count)), len = r.below(static_cast<uint32_t>(count - first)) + 1;
    std::vector<T> part(len);
    ok = ok && out.copy_out(first, len, part.data());
    for (unsigned long long k = 0; ok && k < len; ++k) {
        ok = kernels::same(part[k], want[first + k]);
        kernels::fill(part[k], r);
        want[first + k] = part[k];
    }
    ok = ok && out.copy_in(first, len, part.data()) && check("copy_in", bases[n - 1], want);
    if (!ok)
        std::printf("layout %llu failed: %u views of %zu-byte elements, %llu each\n", t.layouts, n, sizeof(T), count);
    ++t.layouts;
    t.elements += count;
    return ok;
}

/// The hazard: c = combine(a, b, d) over four views in four regions, hand loop and accessor.
bool stale(Rng &r)
{
    const unsigned long long count = 4096;
    const unsigned long long bases[4] = {kHbmBase + 1 * kWindow, kHbmBase + 3 * kWindow, kHbmBase + 5 * kWindow,
                                         kHbmBase + 7 * kWindow};
    std::vector<std::vector<uint32_t>> data(4, std::vector<uint32_t>(count));
    for (auto &d : data)
        for (auto &e : d)
            kernels::fill(e, r);
    std::vector<uint32_t> want(count);
    for (unsigned long long i = 0; i < count; ++i) {
        uint32_t xs[4] = {data[0][i], data[1][i], data[2][i], data[3][i]};
        want[i] = kernels::combine(xs, 3, data[3][i]);
    }
    using neuron::Tensor;
    Tensor<const uint32_t> a(bases[0], count), b(bases[1], count), d(bases[2], count);
    Tensor<uint32_t> c(bases[3], count);
    for (unsigned v = 0; v < 4; ++v)
        soc_write(bases[v], data[v].data(), count * 4);
    kernels::hand_spans(c, a, b, d);
    std::vector<uint32_t> got(count);
    soc_read(bases[3], got.data(), count * 4);
    unsigned long long wrong = 0;
    for (unsigned long long i = 0; i < count; ++i)
        wrong += got[i] != want[i];
    for (unsigned v = 0; v < 4; ++v)
        soc_write(bases[v], data[v].data(), count * 4);
    kernels::Calls calls;
    bool right = kernels::accessor(c, calls, a, b, d) && check("accessor (stale layout)", bases[3], want);
    std::printf("stale pointers: the hand-written span loop got %llu of %llu elements wrong; the accessor %s\n",
                wrong, count, right ? "none" : "SOME");
    return wrong > 0 && right;
}

} // namespace

int main(int argc, char **argv)
{
    unsigned long long seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1;
    extended_isa::sdk::hbm_scratch = kHbmBase + kHbmSize - kPinned;
    if (neuron_translate_host_start(kEngineBase, kHbmBase, kHbmSize, extended_isa::sdk::hbm_scratch) != 0) {
        std::printf("host model: %s\n", neuron_translate_host_last_error());
        return 1;
    }
    _init_translate_ctx();
    if (argc > 1 && std::strcmp(argv[1], "--fixed") == 0) {
        bool all = fixed::run_all(neuron_translate_ctx(), kWindow, kHbmBase + kHbmSize - kPinned,
                                  kernels::Soc{soc_write, soc_read}, report);
        neuron_translate_host_stop();
        return all ? 0 : 1;
    }
    Rng r{seed};
    Totals t;
    bool ok = true;
    for (unsigned k = 0; ok && k < kLayouts; ++k) {
        switch (k % 4) {
        case 0: ok = layout<uint32_t>(r, t); break;
        case 1: ok = layout<unsigned long long>(r, t); break;
        case 2: ok = layout<kernels::S12>(r, t); break;
        default: ok = layout<kernels::P3>(r, t); break;
        }
    }
    std::printf("layouts: %llu (%llu elements, %llu views pinned, %llu misaligned), per element and accessor "
                "right; accessor calls direct %llu, bounced %llu\n",
                t.layouts, t.elements, t.pinned, t.misaligned, t.calls.direct, t.calls.bounced);
    ok = ok && t.calls.direct > 0 && t.calls.bounced > 0;
    ok = stale(r) && ok;
    neuron_translate_host_stop();
    std::printf("%s\n", ok ? "accessor: all checks hold" : "accessor: FAILED");
    return ok ? 0 : 1;
}
