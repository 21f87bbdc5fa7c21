/*
 * c10::ScalarType: the custom-op API's eight element types (torch::kFloat ... kByte), their
 * C++ element types and sizes, for kernels built on a workstation with the neuron-translate
 * custom-op SDK. C++14.
 */
#ifndef NEURON_CUSTOMOP_C10_SCALAR_TYPE_H
#define NEURON_CUSTOMOP_C10_SCALAR_TYPE_H

#include <cstdint>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <neuron_customop_host/runtime.h>

namespace c10 {

/// The element types a custom operator's tensors have (PyTorch's numbering).
enum class ScalarType : int8_t {
    Byte = NT_CUSTOMOP_DTYPE_BYTE,   // uint8_t
    Char = NT_CUSTOMOP_DTYPE_CHAR,   // int8_t
    Short = NT_CUSTOMOP_DTYPE_SHORT, // int16_t
    Int = NT_CUSTOMOP_DTYPE_INT,     // int32_t
    Long = NT_CUSTOMOP_DTYPE_LONG,   // int64_t
    Half = NT_CUSTOMOP_DTYPE_HALF,   // c10::Half
    Float = NT_CUSTOMOP_DTYPE_FLOAT, // float
    BFloat16 = NT_CUSTOMOP_DTYPE_BFLOAT16,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

// The functions below expand runtime.h's NT_CUSTOMOP_DTYPE_TABLE, the runtime's one table
// of the element types (sdk/runtime/src/base/codes.rs, DTYPES).

/// Bytes of one element of `t`.
constexpr unsigned elementSize(ScalarType t)
{
#define NT_CUSTOMOP_SIZE_OF(name, type, bytes, integral) t == ScalarType::name ? bytes##u:
    return NT_CUSTOMOP_DTYPE_TABLE(NT_CUSTOMOP_SIZE_OF) 0u;
#undef NT_CUSTOMOP_SIZE_OF
}

/// Whether `t` holds integers (the bitwise operations take only these).
constexpr bool isIntegralType(ScalarType t)
{
#define NT_CUSTOMOP_INTEGRAL(name, type, bytes, integral) t == ScalarType::name ? integral == 1:
    return NT_CUSTOMOP_DTYPE_TABLE(NT_CUSTOMOP_INTEGRAL) false;
#undef NT_CUSTOMOP_INTEGRAL
}

/// The type's name as PyTorch prints it.
constexpr const char *toString(ScalarType t)
{
#define NT_CUSTOMOP_NAME(name, type, bytes, integral) t == ScalarType::name ? #name:
    return NT_CUSTOMOP_DTYPE_TABLE(NT_CUSTOMOP_NAME) "";
#undef NT_CUSTOMOP_NAME
}

/// The ScalarType of the C++ element type T (CppTypeToScalarType<T>::value), defined for
/// the eight element types only.
template <class T> struct CppTypeToScalarType;
#define NT_CUSTOMOP_OF_TYPE(name, type, bytes, integral)                                        \
    template <> struct CppTypeToScalarType<type> {                                               \
        static constexpr ScalarType value = ScalarType::name;                                  \
    };
NT_CUSTOMOP_DTYPE_TABLE(NT_CUSTOMOP_OF_TYPE)
#undef NT_CUSTOMOP_OF_TYPE

} // namespace c10

#endif /* NEURON_CUSTOMOP_C10_SCALAR_TYPE_H */
