/*
 * The runner as a C++ API, for an author's own tests of a kernel: call a registered op as
 * `ntx op run` does (the shape function, the output, one process per core, every misuse
 * reported), with tensors the test makes, reads from .npy files or fills from its arrays.
 * The test program links the op's compute and shape sources, binds each kernel it calls
 * with NT_CUSTOMOP_BIND, and links libneuron_customop_host (pkg-config
 * neuron_customop_host). docs/customop-host.md has an example. C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_RUNNER_HPP
#define NEURON_CUSTOMOP_HOST_RUNNER_HPP

#include <initializer_list>

#include <neuron_customop_host/bind.hpp>
#include <neuron_customop_host/ops.hpp>

namespace nt_customop {

/// One argument of a call: a tensor, an integer (int64_t or an integral Scalar), a
/// double (or a floating Scalar) or a Scalar.
class Value {
  public:
    Value(const at::Tensor &t) : arg_(arg(t)), tensor_(t) {}
    template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
    Value(T v) : arg_{NT_CUSTOMOP_ARG_INT, nullptr, static_cast<int64_t>(v), 0.0}
    {
    }
    Value(double v) : arg_{NT_CUSTOMOP_ARG_DOUBLE, nullptr, 0, v} {}
    Value(const c10::Scalar &s) : arg_(s.arg()) {}
    const nt_customop_arg &get() const { return arg_; }

  private:
    nt_customop_arg arg_;
    at::Tensor tensor_; // holds a tensor argument for the call
};

/// What a call gives: the runner's exit status (NT_CUSTOMOP_EXIT_RAN and the rest, in
/// runtime.h) and, on NT_CUSTOMOP_EXIT_RAN, the output.
struct Result {
    int status;
    at::Tensor output;
};

enum class Stats { None = NT_CUSTOMOP_STATS_NONE, Text = NT_CUSTOMOP_STATS_TEXT, Json = NT_CUSTOMOP_STATS_JSON };

/// Calls op `op` on `cores` cores; reports go to stderr, stats to stdout.
inline Result run(const char *op, std::initializer_list<Value> args, unsigned cores = 1, Stats stats = Stats::None)
{
    nt_customop_arg list[NT_CUSTOMOP_MAX_CALL_ARGS];
    size_t n = 0;
    for (const Value &v : args)
        if (n < NT_CUSTOMOP_MAX_CALL_ARGS)
            list[n++] = v.get();
    const nt_customop_meta *out = nullptr;
    int status = args.size() > NT_CUSTOMOP_MAX_CALL_ARGS
                     ? NT_CUSTOMOP_EXIT_REFUSED
                     : nt_customop_run(op, list, n, cores, static_cast<int>(stats), &out);
    Result r = {status, status == NT_CUSTOMOP_EXIT_RAN ? adopt(out) : at::Tensor()};
    return r;
}

/// The array in a .npy file as a tensor (undefined, with the reason on stderr, if it is not one).
inline at::Tensor load_npy(const char *path)
{
    const nt_customop_meta *m = nt_customop_load_npy(path);
    return m ? adopt(m) : at::Tensor();
}
/// Writes a tensor to a .npy file: false (the reason on stderr) if it cannot.
inline bool save_npy(const at::Tensor &t, const char *path) { return nt_customop_save_npy(t.nt_meta(), path) == 0; }

/// All of a tensor's elements from `data` (n of them, its numel, of its element type).
template <class T> inline bool copy_from(const at::Tensor &t, const T *data, size_t n)
{
    return t.scalar_type() == c10::CppTypeToScalarType<T>::value &&
           nt_customop_bytes(t.nt_meta(), reinterpret_cast<uint8_t *>(const_cast<T *>(data)), n * sizeof(T), 1) == 0;
}
/// All of a tensor's elements into `data`.
template <class T> inline bool copy_to(const at::Tensor &t, T *data, size_t n)
{
    return t.scalar_type() == c10::CppTypeToScalarType<T>::value &&
           nt_customop_bytes(t.nt_meta(), reinterpret_cast<uint8_t *>(data), n * sizeof(T), 0) == 0;
}

} // namespace nt_customop

#endif /* NEURON_CUSTOMOP_HOST_RUNNER_HPP */
