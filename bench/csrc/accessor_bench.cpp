// The three-tensor kernel of the C++ accessor for the host benchmarks (bench/benches/
// host.rs): c[i] = a[i] + 3 * b[i] + 1, the same loop body over plain memory, through
// neuron::for_each, and per element (Tensor::get, get, set).
#include <neuron_translate.hpp>

namespace {

inline void body(const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n)
{
    for (size_t k = 0; k < n; ++k)
        c[k] = a[k] + 3 * b[k] + 1;
}

} // namespace

extern "C" void nt_bench_kernel_plain(const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n)
{
    body(a, b, c, n);
}

extern "C" int nt_bench_kernel_accessor(void *ctx, unsigned long long a, unsigned long long b, unsigned long long c,
                                        unsigned long long n)
{
    neuron::Tensor<const uint32_t> x(ctx, a, n), y(ctx, b, n);
    neuron::Tensor<uint32_t> z(ctx, c, n);
    return neuron::for_each(
        0, n, [](unsigned long long, size_t len, const uint32_t *p, const uint32_t *q, uint32_t *r) { body(p, q, r, len); },
        x, y, z);
}

extern "C" int nt_bench_kernel_per_element(void *ctx, unsigned long long a, unsigned long long b,
                                           unsigned long long c, unsigned long long n)
{
    neuron::Tensor<const uint32_t> x(ctx, a, n), y(ctx, b, n);
    neuron::Tensor<uint32_t> z(ctx, c, n);
    bool ok = true;
    for (unsigned long long i = 0; i < n; ++i)
        ok = z.set(i, x.get(i) + 3 * y.get(i) + 1) && ok;
    return ok;
}
