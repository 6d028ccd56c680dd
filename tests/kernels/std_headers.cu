// A kernel written as for nvcc: every standard header asyncrt provides,
// used the way CUDA code commonly uses them. test_std_headers.c compiles it
// for several archs; test_std_headers_gpu.c runs std_math against a CPU
// reference (keep the formula in step with reference() there).
#include <math.h>
#include <cmath>
#include <cstdint>
#include <stdint.h>
#include <climits>
#include <limits.h>
#include <cfloat>
#include <float.h>
#include <limits>
#include <type_traits>
#include <utility>
#include <tuple>
#include <iterator>
#include <cstdio>
#include <stdio.h>
#include <cassert>
#include <assert.h>
#include <cstddef>
#include <stddef.h>
#include <cstdlib>
#include <stdlib.h>
#include <cstring>
#include <string.h>
#include <algorithm>
#include <initializer_list>

// Users specialise std::numeric_limits for their own types.
struct half_bits {
    unsigned short bits;
};
namespace std {
template <> class numeric_limits<half_bits> {
public:
    static constexpr bool is_specialized = true;
    static constexpr int digits = 11;
    __host__ __device__ static constexpr half_bits max() noexcept { return half_bits{0x7bff}; }
};
} // namespace std
static_assert(std::numeric_limits<half_bits>::is_specialized && std::numeric_limits<half_bits>::digits == 11, "");
static_assert(std::numeric_limits<half_bits>::max().bits == 0x7bff, "");
static_assert(!std::numeric_limits<std::pair<int, int>>::is_specialized, "");

static_assert(std::numeric_limits<int>::max() == INT_MAX && std::numeric_limits<int>::min() == INT_MIN, "");
static_assert(std::numeric_limits<std::uint8_t>::max() == UINT8_MAX, "");
static_assert(std::numeric_limits<float>::max() == FLT_MAX && std::numeric_limits<double>::epsilon() == DBL_EPSILON, "");
static_assert(std::numeric_limits<float>::has_infinity && std::numeric_limits<const float>::digits == FLT_MANT_DIG, "");
static_assert(std::numeric_limits<long>::digits == 63 && LONG_MAX == LLONG_MAX && CHAR_BIT == 8, "");
static_assert(sizeof(std::int8_t) == 1 && sizeof(int16_t) == 2 && sizeof(std::uint32_t) == 4 && sizeof(uint64_t) == 8, "");
static_assert(sizeof(std::intptr_t) == sizeof(void *) && SIZE_MAX == UINT64_MAX && INT32_MIN == -2147483647 - 1, "");
static_assert(sizeof(std::size_t) == 8 && sizeof(std::ptrdiff_t) == 8 && sizeof(std::max_align_t) >= 8, "");
static_assert(std::is_same<std::nullptr_t, decltype(nullptr)>::value, "");

struct with_ctor {
    int v;
    __host__ __device__ with_ctor(int x) : v(x) {}
};
struct base_class { virtual __host__ __device__ ~base_class() {} };
struct derived_class final : base_class {};
enum class colour : std::uint8_t { red, green };

static_assert(std::is_integral<const int>::value && !std::is_integral<float>::value, "");
static_assert(std::is_floating_point_v<double> && std::is_arithmetic_v<char>, "");
static_assert(std::is_signed<int>::value && std::is_unsigned<unsigned char>::value && !std::is_signed<bool>::value, "");
static_assert(std::is_same_v<std::make_unsigned_t<int>, unsigned> && std::is_same_v<std::make_signed_t<unsigned long>, long>, "");
static_assert(std::is_same_v<std::make_unsigned_t<const char>, const unsigned char>, "");
static_assert(std::is_same_v<std::decay_t<const int (&)[4]>, const int *> && std::is_same_v<std::decay_t<int(float)>, int (*)(float)>, "");
static_assert(std::is_same_v<std::remove_cvref_t<const volatile int &>, int> && std::is_same_v<std::add_pointer_t<int &>, int *>, "");
static_assert(std::is_same_v<std::common_type_t<int, long, float>, float> && std::is_same_v<std::common_type_t<int, unsigned>, unsigned>, "");
static_assert(std::is_same_v<std::conditional_t<true, int, float>, int> && std::is_same_v<std::underlying_type_t<colour>, std::uint8_t>, "");
static_assert(std::is_enum_v<colour> && std::is_class_v<with_ctor> && std::is_polymorphic_v<base_class> && std::is_final_v<derived_class>, "");
static_assert(std::is_base_of_v<base_class, derived_class> && std::is_convertible_v<derived_class *, base_class *>, "");
static_assert(std::is_constructible_v<with_ctor, int> && !std::is_default_constructible_v<with_ctor>, "");
static_assert(std::is_trivially_copyable_v<std::pair<int, float>> && !std::is_trivially_destructible_v<base_class>, "");
static_assert(std::is_pointer_v<int *const> && std::is_member_function_pointer_v<void (with_ctor::*)()> &&
              std::is_member_object_pointer_v<int with_ctor::*> && std::is_function_v<void(int)>, "");
static_assert(std::rank_v<int[2][3]> == 2 && std::extent_v<int[2][3], 1> == 3 && std::alignment_of_v<double> == 8, "");
static_assert(std::conjunction_v<std::true_type, std::is_integral<int>> && !std::disjunction_v<std::false_type>, "");
static_assert(std::is_same_v<std::invoke_result_t<float (*)(int), int>, float>, "");
static_assert(std::is_invocable_v<float (*)(int), int> && !std::is_invocable_v<float (*)(int), with_ctor>, "");
static_assert(std::is_same_v<std::make_index_sequence<5>, std::index_sequence<0, 1, 2, 3, 4>>, "");
static_assert(std::is_same_v<std::tuple_element_t<1, std::tuple<int, float, char>>, float>, "");
static_assert(std::tuple_size_v<std::tuple<int, float, char>> == 3 && std::tuple_size<const std::pair<int, int>>::value == 2, "");
static_assert(std::is_same_v<std::iterator_traits<const float *>::value_type, float>, "");
static_assert(std::is_base_of_v<std::forward_iterator_tag, std::random_access_iterator_tag>, "");
static_assert(std::min(3, 4) == 3 && std::max({1, 7, 2}) == 7 && std::clamp(9, 0, 5) == 5, "");
static_assert(std::get<1>(std::make_tuple(1, 2.5f)) == 2.5f, "");

template <class T> __device__ T squared_clamped(T x)
{
    return std::min(std::max(std::pow(x, T(2)), T(0)), std::numeric_limits<T>::max());
}

// out[i] from in[i] with <cmath> and <cstdint>; flags[i] from the
// classification functions. The CPU reference is in test_std_headers_gpu.c.
extern "C" __global__ void std_math(const float *in, float *out, std::uint32_t *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(n >= 0);
    if (i >= n) return;
    float x = in[i];
    auto [s, c] = std::make_pair(std::sin(x), std::cos(x));
    std::tuple<float, std::int32_t> t = std::make_tuple(std::sqrt(std::fabs(x)), (std::int32_t)std::floor(x));
    float y = s * s + c * c + std::get<0>(t) + (float)std::get<1>(t) + (float)M_PI + std::exp(-std::fabs(x)) +
              std::atan2(x, 2.0f) + std::fmin(x, 1.0f) + squared_clamped(x) / 100.0f;
    out[i] = std::isfinite(y) ? y : NAN;
    std::uint32_t f = (std::uint32_t)std::fpclassify(x) | (std::isnormal(x) ? 8u : 0u) |
                      (std::signbit(x) ? 16u : 0u) | (std::isinf(x * 1e38f) ? 32u : 0u) |
                      (std::isgreater(x, 0.0f) ? 64u : 0u);
    flags[i] = f;
}

// The rest compiles, and runs cleanly, but has no reference: it only checks
// that the headers' functions exist on the device.
struct point {
    int x, y;
    __host__ __device__ bool operator==(const point &o) const { return x == o.x && y == o.y; }
};
extern "C" __global__ void std_misc(int *out, const char *text)
{
    int a[4] = {4, 1, 3, 2};
    std::reverse(std::begin(a), std::end(a));
    int *m = std::max_element(a, a + 4);
    std::swap(a[0], a[1]);
    point p{1, 2}, q{};
    std::memcpy(&q, &p, sizeof p);
    std::memset(a, 0, sizeof a[0]);
    int u = 0, v = 0;
    std::tie(u, v) = std::make_pair(5, 6);
    std::reverse_iterator<int *> r(a + 4);
    out[0] = *m + (int)std::distance(a, std::next(a, 2)) + (int)std::size(a) + (q == p) + u + v + *r +
             (int)std::strlen(text) + std::memcmp(&p, &q, sizeof p) + std::abs(-3) + (int)std::count(a, a + 4, 0) +
             (int)std::apply([](int i, int j) { return i * j; }, std::make_tuple(2, 3)) +
             (std::find(a, a + 4, 3) != a + 4) + (int)offsetof(point, y) + std::numeric_limits<std::int16_t>::max();
    if (out[0] == INT_MIN) printf("unreachable %d\n", out[0]);
    void *heap = std::malloc(16);
    std::free(heap);
}
