// A kernel written for nvcc, compiled unchanged: <cmath> for std::pow and
// M_PI, <cstdint> for the fixed-width types. NVRTC has neither header; the
// runtime's built-in device-side headers provide them.
#include <cmath>
#include <cstdint>

__global__ void polar(const float *r, float *out, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int64_t k = static_cast<int64_t>(i % 8);
        out[i] = std::pow(r[i], 2.0f) * static_cast<float>(M_PI) + static_cast<float>(k);
    }
}
