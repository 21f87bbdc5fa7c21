// The custom-op SDK's core types (sdk/include/c10/core/, c10/util/ArrayRef.h), as kernels
// use them (sdk/tests/tests/sdk_types.rs builds and runs it as C++14 with gcc and clang):
// the eight element types and their sizes; size lists of any one integer type without a
// narrowing error, at most eight of them, compared with ==; options from an element type.
// Prints one line per check; exits 0 only if all hold.
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/ArrayRef.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

static_assert(c10::elementSize(c10::kFloat) == 4 && c10::elementSize(c10::kBFloat16) == 2 &&
                  c10::elementSize(c10::kHalf) == 2 && c10::elementSize(c10::kInt) == 4 &&
                  c10::elementSize(c10::kChar) == 1 && c10::elementSize(c10::kLong) == 8 &&
                  c10::elementSize(c10::kShort) == 2 && c10::elementSize(c10::kByte) == 1,
              "element sizes");
static_assert(c10::CppTypeToScalarType<float>::value == c10::kFloat &&
                  c10::CppTypeToScalarType<c10::BFloat16>::value == c10::kBFloat16 &&
                  c10::CppTypeToScalarType<uint8_t>::value == c10::kByte,
              "C++ element types");
static_assert(c10::isIntegralType(c10::kShort) && !c10::isIntegralType(c10::kHalf), "integral types");

namespace {

int failures = 0;

void expect(bool ok, const char *what)
{
    std::printf("%s %s\n", ok ? "ok" : "FAIL", what);
    failures += ok ? 0 : 1;
}

int64_t product(c10::IntArrayRef s)
{
    int64_t p = 1;
    for (int64_t d : s)
        p *= d;
    return p;
}

} // namespace

int main()
{
    size_t n = 32;
    unsigned u = 3;
    long long ll = 5;
    int i = 7;
    expect(product({n}) == 32 && product({u, 4u}) == 12 && product({ll, 2ll, 2ll}) == 20 && product({i, i}) == 49,
           "size lists of size_t, unsigned, long long and int");
    c10::IntArrayRef a{2, 3, 4}, b{size_t{2}, size_t{3}, size_t{4}}, c{2, 3};
    expect(a == b && a != c && a.size() == 3 && a[2] == 4, "sizes compare by value");
    c10::IntArrayRef nine{1, 1, 1, 1, 1, 1, 1, 1, 1}, eight{1, 1, 1, 1, 1, 1, 1, 1};
    expect(nine.too_long() && !eight.too_long() && eight.size() == c10::kMaxDims, "at most eight dimensions");
    const int64_t raw[] = {4, 65535};
    expect(c10::IntArrayRef(raw, 2) == c10::IntArrayRef({4, 65535}), "sizes from memory");
    c10::TensorOptions f = c10::kFloat, none;
    expect(f.has_dtype() && f.dtype() == c10::kFloat && !none.has_dtype() &&
               none.dtype(c10::kInt).dtype() == c10::kInt,
           "options from an element type");
    expect(c10::toString(c10::kBFloat16)[0] == 'B' && c10::toString(c10::kHalf)[0] == 'H', "names");
    std::printf("%s\n", failures == 0 ? "all core types right" : "CORE TYPES WRONG");
    return failures == 0 ? 0 : 1;
}
