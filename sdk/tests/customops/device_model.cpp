// What the device's compiler and data model decide, in kernels as authors write them: each
// output element is one case, and the host run, --device and the device give the same bytes
// (check_device.py). Each case compiled differently under g++ on x86-64 (docs/customop-api.md,
// "Device parity"): the host build now uses the device's front end and its char.
#include <torch/torch.h>

namespace {

float diff(float a, float b) { return a - b; }

// Reads the next element: a call's arguments are evaluated left to right by clang.
template <class Accessor> float next(const Accessor &in, int &k)
{
    float v = in[k];
    ++k;
    return v;
}

typedef float float2 __attribute__((ext_vector_type(2)));

struct Pick {
    template <int N> static int of() { return N; }
};
template <> int Pick::of<0>() { return 7; }

} // namespace

torch::Tensor device_model(const torch::Tensor &t)
{
    torch::Tensor out = torch::zeros({6}, torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    int k = 0;
    o[0] = diff(next(in, k), next(in, k)); // in[0] - in[1]
    char c = (char)(int)in[2];             // 200: unsigned on the Q7
    o[1] = (float)c;
    int table[4] = {[2] = 5};
    o[2] = (float)table[2];
    __builtin_assume(k == 2);
    float2 v = {in[3], in[4]};
    v = v * 2.0f;
    o[3] = v.y;
    o[4] = (float)Pick::of<0>() + (float)Pick::of<3>();
    o[5] = (float)k;
    return out;
}

namespace {

struct CharDouble {
    char c;
    double d;
};
struct IntLongLong {
    int i;
    long long l;
};

// FNV-1a over `unsigned long`: defined behaviour whose value depends on long's width.
unsigned long fnv(const char *s)
{
    unsigned long h = 2166136261UL;
    for (; *s; ++s)
        h = (h ^ static_cast<unsigned char>(*s)) * 16777619UL;
    return h;
}

} // namespace

// What the device's data model decides (ILP32, long double as double, 8-byte aligned
// double and long long, single precision without excess): each int32 element one case.
torch::Tensor data_model(const torch::Tensor &t)
{
    torch::Tensor out = torch::zeros({11}, torch::kInt);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<int, 1>();
    unsigned a = static_cast<unsigned>(in[0]); // 100000
    unsigned long square = static_cast<unsigned long>(a) * a;
    o[0] = static_cast<int>(fnv("neuron") % 1000);
    o[1] = static_cast<int>(sizeof(long));
    o[2] = static_cast<int>(sizeof(size_t));
    o[3] = static_cast<int>(sizeof(void *));
    o[4] = static_cast<int>(sizeof(long double));
    o[5] = static_cast<int>(sizeof(CharDouble));
    o[6] = static_cast<int>(offsetof(IntLongLong, l));
    long double tiny = static_cast<long double>(in[1]) * 1e-17L; // 1e-17
    long double sum = 1.0L + tiny;
    o[7] = static_cast<int>((sum - 1.0L) * 1e18L);
    volatile float big = in[2]; // 1e30
    float ratio = big * big / big;
    o[8] = ratio > 1e38f ? 1 : 0; // infinity: no excess precision
    o[9] = static_cast<int>(square / 1000);
    o[10] = static_cast<int>(alignof(long long));
    return out;
}

// An invalid operation's NaN: 0x7fc00000 on the Q7, 0xffc00000 on x86, which the host run
// reports (x86-default-nan) instead of giving silently.
torch::Tensor invalid_nan(const torch::Tensor &t)
{
    torch::Tensor out = torch::zeros({2}, torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    float big = in[2] * in[2]; // infinity
    o[0] = in[1];
    o[1] = big - big;
    return out;
}
