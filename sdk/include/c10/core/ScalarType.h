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

/// Bytes of one element of `t`.
constexpr unsigned elementSize(ScalarType t)
{
    return t == kByte || t == kChar ? 1u : t == kShort || t == kHalf || t == kBFloat16 ? 2u : t == kLong ? 8u : 4u;
}

/// Whether `t` holds integers (the bitwise operations take only these).
constexpr bool isIntegralType(ScalarType t)
{
    return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong;
}

/// The type's name as PyTorch prints it.
constexpr const char *toString(ScalarType t)
{
    return t == kByte    ? "Byte"
           : t == kChar  ? "Char"
           : t == kShort ? "Short"
           : t == kInt   ? "Int"
           : t == kLong  ? "Long"
           : t == kHalf  ? "Half"
           : t == kFloat ? "Float"
                         : "BFloat16";
}

/// The ScalarType of the C++ element type T (CppTypeToScalarType<T>::value), defined for
/// the eight element types only.
template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<uint8_t> {
    static constexpr ScalarType value = kByte;
};
template <> struct CppTypeToScalarType<int8_t> {
    static constexpr ScalarType value = kChar;
};
template <> struct CppTypeToScalarType<int16_t> {
    static constexpr ScalarType value = kShort;
};
template <> struct CppTypeToScalarType<int32_t> {
    static constexpr ScalarType value = kInt;
};
template <> struct CppTypeToScalarType<int64_t> {
    static constexpr ScalarType value = kLong;
};
template <> struct CppTypeToScalarType<Half> {
    static constexpr ScalarType value = kHalf;
};
template <> struct CppTypeToScalarType<float> {
    static constexpr ScalarType value = kFloat;
};
template <> struct CppTypeToScalarType<BFloat16> {
    static constexpr ScalarType value = kBFloat16;
};

} // namespace c10

#endif /* NEURON_CUSTOMOP_C10_SCALAR_TYPE_H */
