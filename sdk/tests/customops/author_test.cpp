// An author's own test of their kernels, in C++ through the runner API: tensors made and
// filled in the program, each op called as the runner calls it, outputs checked. Built
// with the kernels' sources (relu.cpp, relu_tcm.cpp and their shape files) from an
// installed tree, with pkg-config and with CMake (sdk/tests/tests/sdk_author.rs).
#include <stdio.h>
#include <torch/torch.h>
#include <neuron_customop_host/runner.hpp>

torch::Tensor relu_forward(const torch::Tensor &input);
torch::Tensor relu_multicore(const torch::Tensor &input);

static int failures = 0;

static void expect(bool ok, const char *what)
{
    printf("%s %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

int main()
{
    NT_CUSTOMOP_BIND(relu_forward);
    NT_CUSTOMOP_BIND(relu_multicore);
    const float in[6] = {-1.5f, 2.0f, -3.0f, 4.25f, 0.0f, 6.0f};
    const float want[6] = {0.0f, 2.0f, 0.0f, 4.25f, 0.0f, 6.0f};
    torch::Tensor x = torch::empty({2, 3}, torch::kFloat);
    expect(nt_customop::copy_from(x, in, 6), "the input filled");

    nt_customop::Result r = nt_customop::run("relu_forward", {x});
    float got[6] = {};
    expect(r.status == 0 && nt_customop::copy_to(r.output, got, 6), "relu_forward ran");
    bool same = true;
    for (int k = 0; k < 6; k++)
        same = same && got[k] == want[k];
    expect(same, "relu_forward's output");

    r = nt_customop::run("relu_multicore", {x}, 3);
    float multi[6] = {};
    expect(r.status == 0 && nt_customop::copy_to(r.output, multi, 6), "relu_multicore on 3 cores ran");
    same = true;
    for (int k = 0; k < 6; k++)
        same = same && multi[k] == want[k];
    expect(same, "relu_multicore's output");

    torch::Tensor shared = x; // a copy shares the storage
    shared.fill_(2.5f);
    float filled[6] = {};
    expect(nt_customop::copy_to(x, filled, 6) && filled[0] == 2.5f && filled[5] == 2.5f,
           "a tensor's copy shares its storage");

    expect(nt_customop::run("relu_forward", {x, 3}).status == 1, "a call with a wrong argument refused");
    expect(nt_customop::run("no_such_op", {x}).status == 1, "an op nobody registered refused");
    printf(failures ? "author test failed\n" : "author test passed\n");
    return failures != 0;
}
