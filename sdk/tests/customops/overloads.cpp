// Overloads as authors write them: a helper named like its kernel, and a kernel overloaded
// on its scalar parameter. The device's build declares each kernel from its op's schema
// (overloads_shape.cpp), and so calls that overload; so do the host run and --device.
#include <torch/torch.h>

float relu(float v) { return v > 0 ? v : 0; }

torch::Tensor relu(const torch::Tensor &t)
{
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int i = 0; i < t.size(0); ++i)
        for (int j = 0; j < t.size(1); ++j) {
            float v = in[i][j];
            // A branchy loop: the device's assembly describes the -1's bits in its debug
            // information's comments as raw bytes (0x80 0xbf), which are not UTF-8.
            if (v > 100)
                o[i][j] = relu(v - 100) + 100;
            else if (v < -100)
                o[i][j] = -1;
            else
                o[i][j] = relu(v);
        }
    return out;
}

torch::Tensor scale(const torch::Tensor &t, int k)
{
    (void)k;
    return torch::zeros(t.sizes(), torch::kFloat); // never the schema's: zeros tell
}

torch::Tensor scale(const torch::Tensor &t, float k)
{
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int i = 0; i < t.size(0); ++i)
        for (int j = 0; j < t.size(1); ++j) {
            float v = in[i][j];
            o[i][j] = v * k;
        }
    return out;
}
