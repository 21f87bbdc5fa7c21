// Kernels held to the device's own compile (check_parity.py): one case a build, chosen by
// -DCASE=<name>. The REFUSED_* cases are what the device's build refuses (its accessor
// element is a proxy, its compile is -std=c++14 -Wall -Werror, no accessor opens on a
// temporary tensor); the others it builds, and so must the host.
#include <stdint.h>
#include <stdio.h>
#include <algorithm>
#include <type_traits>
#include <neuron/neuron-utils.hpp>
#include <torch/torch.h>

#define IS(name) (CASE == name)
#define REFUSED_INCREMENT 1     // out[i]++
#define REFUSED_COMPOUND 2      // out[i] += v
#define REFUSED_MAX 3           // std::max(in[i], 0.f)
#define REFUSED_REFERENCE 4     // float &r = out[i]
#define REFUSED_ADDRESS 5       // &out[i]
#define REFUSED_PRINTF 6        // printf("%f", in[i])
#define REFUSED_COPY 7          // out[i] = out[j]
#define REFUSED_TEMPORARY 8     // torch::ones(...).accessor<float, 1>()
#define REFUSED_WARNING 9       // an unused variable (-Wall -Werror)
#define BUILT_NEWER_WARNINGS 10 // what clang 22 warns of and clang 10 did not: built
#define BUILT_PROXY_IDIOMS 11   // a copy of the proxy writes; c ? in[i] : 0 is an int
#define BUILT_PARTLY_WRITTEN 12 // get_dst_tensor() written in part: output-unwritten
#define BUILT_READ_UNWRITTEN 13 // torch::empty read where nothing wrote: uninitialized-read
#define BUILT_TCM_STATIC 14     // tensor_to_tcm into a static array: tcm-copy-not-dataram
#define BUILT_TCM_STACK 15      // tensor_to_tcm into a stack array (-DSTACK_SIZE decides)

// x (n float32) through the case; the output is n float32 too.
torch::Tensor parity(const torch::Tensor &x)
{
    const int64_t n = x.size(0);
    torch::Tensor out = torch::zeros({n}, torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
#if IS(REFUSED_INCREMENT)
    o[0]++;
#elif IS(REFUSED_COMPOUND)
    o[0] += 1.0f;
#elif IS(REFUSED_MAX)
    o[0] = std::max(in[0], 0.0f);
#elif IS(REFUSED_REFERENCE)
    float &r = o[0];
    r = 1.0f;
#elif IS(REFUSED_ADDRESS)
    float *p = &o[0];
    *p = 1.0f;
#elif IS(REFUSED_PRINTF)
    printf("%f\n", in[0]);
#elif IS(REFUSED_COPY)
    o[0] = in[0];
    o[1] = o[0];
#elif IS(REFUSED_TEMPORARY)
    auto t = torch::ones({n}, torch::kFloat).accessor<float, 1>();
    o[0] = t[0];
#elif IS(REFUSED_WARNING)
    int unused = 3;
#elif IS(BUILT_NEWER_WARNINGS)
    int set_only = 0; // -Wunused-but-set-variable, not in clang 10
    for (int64_t i = 0; i < n; i++)
        set_only += 1;
    float scratch[n]; // -Wvla-cxx-extension, not in clang 10
    for (int64_t i = 0; i < n; i++) {
        scratch[i] = in[i];
        o[i] = scratch[i] * 2.0f;
    }
#elif IS(BUILT_PROXY_IDIOMS)
    static_assert(std::is_same<decltype(n > 0 ? in[0] : 0), int>::value, "c ? in[i] : 0 is an int");
    for (int64_t i = 0; i < n; i++) {
        auto e = o[i]; // a copy of the proxy names the same element
        const float v = in[i];
        e = std::max<float>(v, 0.0f) + 1.0f;
    }
    printf("parity: %f\n", (float)in[0]);
#elif IS(BUILT_PARTLY_WRITTEN)
    torch::Tensor dst = get_dst_tensor();
    auto w = dst.accessor<float, 1>();
    for (int64_t i = 0; i + 1 < n; i++) // the last element is never written
        w[i] = in[i];
    return dst;
#elif IS(BUILT_TCM_STATIC)
    static float staged[4];
    x.tcm_accessor().tensor_to_tcm<float>(staged, 0, 4);
    o[0] = staged[0];
#elif IS(BUILT_TCM_STACK)
    float staged[4];
    x.tcm_accessor().tensor_to_tcm<float>(staged, 0, 4);
    for (int64_t i = 0; i < n; i++)
        o[i] = staged[i % 4];
#elif IS(BUILT_READ_UNWRITTEN)
    torch::Tensor part = torch::empty({n}, torch::kFloat);
    auto w = part.accessor<float, 1>();
    for (int64_t i = 0; i + 1 < n; i++)
        w[i] = in[i];
    for (int64_t i = 0; i < n; i++) {
        const float v = w[i]; // the last element was never written
        o[i] = v;
    }
#endif
    return out;
}
