// Kernels for sdk/tests/tests/sdk_trust.rs (nothing of the user's destroyed, nothing left
// behind): children that outlive the kernel (one escapes its session too), a kernel that
// sleeps until its timeout, one that stops itself, one that prints and scales.
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <torch/torch.h>

// A child that sleeps two seconds, then writes "stray-PID" in the working folder.
torch::Tensor leaves_a_child(const torch::Tensor &input)
{
    if (fork() == 0) {
        setsid();
        sleep(2);
        char name[64];
        snprintf(name, sizeof name, "stray-%d", (int)getpid());
        FILE *f = fopen(name, "w");
        if (f)
            fclose(f);
        _exit(0);
    }
    return torch::mul(input, 1.0);
}

// Never returns: each turn sleeps in the C library (the timeout finds it there).
torch::Tensor naps(const torch::Tensor &input)
{
    for (;;)
        usleep(1000);
    return input;
}

// x times factor, after printing the factor (what --stats=json must not mix with).
torch::Tensor chatty_scale(const torch::Tensor &x, double factor)
{
    printf("{\"factor\": %g}\n", factor);
    return torch::mul(x, factor);
}

// A child that leaves the session and clears its death signal, then after two seconds
// writes "escaped-PID"; the kernel writes "escaping" and never returns (the caller is
// killed meanwhile).
torch::Tensor escapes(const torch::Tensor &input)
{
    if (fork() == 0) {
        setsid();
        prctl(PR_SET_PDEATHSIG, 0);
        sleep(2);
        char name[64];
        snprintf(name, sizeof name, "escaped-%d", (int)getpid());
        FILE *f = fopen(name, "w");
        if (f)
            fclose(f);
        _exit(0);
    }
    FILE *f = fopen("escaping", "w");
    if (f)
        fclose(f);
    for (;;)
        usleep(1000);
    return input;
}

// Stops itself (SIGSTOP): it cannot say where it is when its timeout comes.
torch::Tensor stops_itself(const torch::Tensor &input)
{
    raise(SIGSTOP);
    return input;
}
