/*
 * How the runtime calls a kernel or a shape function: an invoker per function type,
 * made from the type itself, and each parameter's kind. NEURON_LIBRARY's m.def registers
 * shape functions with it; the runner's glue binds kernels (NT_CUSTOMOP_BIND). C++14.
 */
#ifndef NEURON_CUSTOMOP_HOST_BIND_HPP
#define NEURON_CUSTOMOP_HOST_BIND_HPP

#include <neuron_customop_host/tensor.hpp>

#include <exception>
#include <tuple>
#include <type_traits>

namespace nt_customop {

template <class P> struct param;
template <> struct param<at::Tensor> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_TENSOR;
    static at::Tensor get(const nt_customop_arg &a)
    {
        nt_customop_tensor_retain(a.meta);
        return adopt(a.meta);
    }
};
template <> struct param<int64_t> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_INT;
    static int64_t get(const nt_customop_arg &a) { return a.i; }
};
template <> struct param<double> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_DOUBLE;
    static double get(const nt_customop_arg &a) { return a.f; }
};
/// A kernel's `int` and `float`, as the device's build declares them from the schema's
/// `int` and `float` (the shape function's `int64_t` and `double`): the runtime refuses an
/// integer that does not fit; a double is rounded to the nearest float.
template <> struct param<int> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_INT32;
    static int get(const nt_customop_arg &a) { return static_cast<int>(a.i); }
};
template <> struct param<float> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_FLOAT32;
    static float get(const nt_customop_arg &a) { return static_cast<float>(a.f); }
};
template <> struct param<c10::Scalar> {
    static constexpr int kind = NT_CUSTOMOP_PARAM_SCALAR;
    static c10::Scalar get(const nt_customop_arg &a)
    {
        return a.kind == NT_CUSTOMOP_ARG_SCALAR_INT ? c10::Scalar(a.i) : c10::Scalar(a.f);
    }
};

template <class P> using bare = typename std::remove_cv<typename std::remove_reference<P>::type>::type;

template <class... P> struct signature {
    static constexpr size_t count = sizeof...(P);
    static const int *kinds()
    {
        static const int k[sizeof...(P) + 1] = {param<bare<P>>::kind..., 0};
        return k;
    }
};

template <size_t... I> struct indices {};
template <size_t N, size_t... I> struct make_indices : make_indices<N - 1, N - 1, I...> {};
template <size_t... I> struct make_indices<0, I...> {
    using type = indices<I...>;
};

template <class... P, size_t... I>
at::Tensor call(at::Tensor (*f)(P...), const nt_customop_arg *args, indices<I...>)
{
    // Each argument lives until the call returns (a reference parameter binds to it).
    std::tuple<bare<P>...> held{param<bare<P>>::get(args[I])...};
    (void)held;
    (void)args;
    return f(std::get<I>(held)...);
}

/// Calls f (a `at::Tensor (*)(P...)`) with the runtime's arguments; the result keeps one
/// reference for the runtime.
template <class... P> const nt_customop_meta *invoke_unguarded(const void *fn, const nt_customop_arg *args)
{
    auto f = reinterpret_cast<at::Tensor (*)(P...)>(const_cast<void *>(fn));
    at::Tensor r = call(f, args, typename make_indices<sizeof...(P)>::type());
    const nt_customop_meta *m = r.nt_meta();
    if (m)
        nt_customop_tensor_retain(m);
    return m;
}

/// The same, with a C++ exception that leaves the function reported (as a crash of the
/// kernel or shape function, with its message) instead of terminating the runner.
template <class... P> const nt_customop_meta *invoke(const void *fn, const nt_customop_arg *args)
{
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
        return invoke_unguarded<P...>(fn, args);
    } catch (const std::exception &e) {
        nt_customop_thrown(e.what());
    } catch (...) {
        nt_customop_thrown(nullptr);
    }
    return nullptr;
#else
    return invoke_unguarded<P...>(fn, args);
#endif
}

template <class... P> void bind(const char *name, at::Tensor (*f)(P...))
{
    nt_customop_bind(name, &invoke<P...>, reinterpret_cast<const void *>(f), signature<P...>::kinds(),
                     sizeof...(P));
}

/// What NEURON_LIBRARY's body gets: m.def(op, &shape_fn, "kernel").
class Library {
  public:
    explicit Library(const char *name) : name_(name) {}
    template <class... P> Library &def(const char *op, at::Tensor (*shape)(P...), const char *kernel)
    {
        nt_customop_register(name_, op, kernel, &invoke<P...>, reinterpret_cast<const void *>(shape),
                             signature<P...>::kinds(), sizeof...(P));
        return *this;
    }

  private:
    const char *name_;
};

struct Registrar {
    Registrar(const char *name, void (*body)(Library &))
    {
        Library m(name);
        body(m);
    }
};

} // namespace nt_customop

/// The stack the build gives each core on the device: `-DSTACK_SIZE=N` bytes, or 4196 (the
/// shipped library's default); more than 4 MiB does not build, as on the device.
#ifdef STACK_SIZE
static_assert(STACK_SIZE > 0 && STACK_SIZE <= NT_CUSTOMOP_STACK_MAX,
              "STACK_SIZE cannot be greater than 4MB (-DSTACK_SIZE=N: NT_CUSTOMOP_STACK_MAX bytes at most, not empty)");
#define NT_CUSTOMOP_STACK_SIZE (STACK_SIZE)
#else
#define NT_CUSTOMOP_STACK_SIZE NT_CUSTOMOP_STACK_DEFAULT
#endif

/// Binds the kernel function `name` for the runner (its glue writes one per kernel).
#define NT_CUSTOMOP_BIND(name) ::nt_customop::bind(#name, &name)

#endif /* NEURON_CUSTOMOP_HOST_BIND_HPP */
