// Kernels for sdk/tests/tests/sdk_trust.rs (nothing of the user's destroyed, nothing left
// behind): children that outlive the kernel (one escapes its session too), a kernel that
// sleeps until its timeout, one that stops itself, one that replaces itself with a sleeping
// program (exec), one that prints and scales, one that
// aborts (which must leave no core file) and one that reads its core file limit.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <torch/torch.h>

// Creates the file `name` in the working folder.
static void touch(const char *name)
{
    FILE *f = fopen(name, "w");
    if (f)
        fclose(f);
}

// Forks a child that leaves the session (with `escape`, it clears its death signal too),
// sleeps two seconds, then writes "PREFIX-PID" in the working folder.
static void child_writes_later(const char *prefix, bool escape)
{
    if (fork() != 0)
        return;
    setsid();
    if (escape)
        prctl(PR_SET_PDEATHSIG, 0);
    sleep(2);
    char name[64];
    snprintf(name, sizeof name, "%s-%d", prefix, (int)getpid());
    touch(name);
    _exit(0);
}

// A child that writes "stray-PID" two seconds later.
torch::Tensor leaves_a_child(const torch::Tensor &input)
{
    child_writes_later("stray", false);
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

// A child that leaves the session and clears its death signal, then writes "escaped-PID"
// two seconds later; the kernel writes "escaping" and never returns (the caller is killed
// meanwhile).
torch::Tensor escapes(const torch::Tensor &input)
{
    child_writes_later("escaped", true);
    touch("escaping");
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

// Prints without end: what is kept of it is bounded, and the timeout ends it.
torch::Tensor prints_forever(const torch::Tensor &input)
{
    for (;;)
        printf("%01000d\n", 1);
    return input;
}

// Replaces itself with a program that sleeps five minutes: the timeout must still hold.
torch::Tensor execs(const torch::Tensor &input)
{
    execl("/bin/sleep", "sleep", "300", static_cast<char *>(nullptr));
    return input;
}

// Dies of SIGABRT: by default a core file in the working folder, which the run prevents.
torch::Tensor aborts(const torch::Tensor &input)
{
    abort();
    return input;
}

// Each element 1 when the kernel's process may write no core file, else 0.
torch::Tensor core_limit(const torch::Tensor &input)
{
    struct rlimit limit;
    float none = getrlimit(RLIMIT_CORE, &limit) == 0 && limit.rlim_cur == 0 ? 1.0f : 0.0f;
    torch::Tensor out = torch::zeros(input.sizes(), torch::kFloat);
    auto o = out.accessor<float, 2>();
    for (int64_t i = 0; i < input.size(0); ++i)
        for (int64_t j = 0; j < input.size(1); ++j)
            o[i][j] = none;
    return out;
}

// A recursion of 4 KiB frames, deeper than any stack (the host's 8 MiB, the device's few
// KiB): its crash says the stack overflowed.
static int deeper(volatile char *above, int n)
{
    volatile char frame[4096];
    frame[0] = above ? above[0] : 1;
    return n ? deeper(frame, n - 1) + frame[0] : frame[0];
}

static volatile int deepest;

// Ends badly, by `how`: 1, a recursion deeper than any stack; 2, killing the process that
// started this core's process (the runner); 3, closing its stdout's descriptor.
torch::Tensor ends_badly(const torch::Tensor &input, double how)
{
    if (how == 3)
        close(1);
    if (how == 1)
        deepest = deeper(nullptr, 1 << 20);
    if (how == 2) {
        kill(getppid(), SIGKILL);
        pause();
    }
    return input;
}
