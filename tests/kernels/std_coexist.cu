// The built-in standard headers next to libcu++'s in one file, included in
// both orders (STD_FIRST picks), each used through its own namespace.
#ifdef STD_FIRST
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <tuple>
#include <iterator>
#include <climits>
#include <cfloat>
#include <cstddef>
#include <algorithm>
#endif
#include <cuda/std/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda/std/utility>
#include <cuda/std/tuple>
#include <cuda/std/iterator>
#include <cuda/std/climits>
#include <cuda/std/cstddef>
#include <cuda/std/array>
#include <cuda/std/functional>
#include <cooperative_groups.h>
#ifndef STD_FIRST
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <tuple>
#include <iterator>
#include <climits>
#include <cfloat>
#include <cstddef>
#include <algorithm>
#endif

struct my_num {
    float v;
};
namespace std {
template <> class numeric_limits<my_num> {
public:
    static constexpr bool is_specialized = true;
};
} // namespace std
static_assert(std::numeric_limits<my_num>::is_specialized && !cuda::std::numeric_limits<my_num>::is_specialized, "");
static_assert(std::numeric_limits<float>::max() == cuda::std::numeric_limits<float>::max(), "");
static_assert(std::numeric_limits<long long>::min() == cuda::std::numeric_limits<long long>::min(), "");
static_assert(cuda::std::is_same<std::int64_t, cuda::std::int64_t>::value && std::is_same<std::uint8_t, cuda::std::uint8_t>::value, "");
static_assert(std::is_same<std::size_t, cuda::std::size_t>::value && INT_MAX == cuda::std::numeric_limits<int>::max(), "");
static_assert(std::tuple_size<cuda::std::tuple<int, int>>::value == 2 && std::tuple_size<std::tuple<int>>::value == 1, "");
static_assert(std::tuple_size<cuda::std::array<int, 5>>::value == 5, "");

extern "C" __global__ void coexist(float *out)
{
    auto [a, b] = cuda::std::make_tuple(1.0f, 2);
    auto [c, d] = std::make_tuple(3.0f, 4);
    cuda::std::array<int, 3> arr{1, 2, 3};
    auto [e, f, g] = arr;
    float m = std::min(a, c) + cuda::std::max(a, c) + std::sqrt(c) + cuda::std::sqrt(a);
    out[threadIdx.x] = m + (float)(b + d + e + f + g) + (float)std::distance(arr.begin(), arr.end()) +
                       std::numeric_limits<float>::epsilon() + (float)cuda::std::numeric_limits<std::int8_t>::max() +
                       (cuda::std::is_same_v<decltype(std::move(a)), float &&> ? 1.0f : 0.0f) + FLT_EPSILON;
    using namespace std;
    out[threadIdx.x] += (float)numeric_limits<int>::digits + (float)min(1, 2) + sqrt(4.0f) + pow(2.0f, 3);
}
