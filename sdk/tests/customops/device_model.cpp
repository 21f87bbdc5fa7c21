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
