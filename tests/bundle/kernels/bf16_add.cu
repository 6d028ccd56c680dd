// A <cuda_bf16.h> kernel (it includes "cuda_fp16.h" quoted, and <utility>, which the library's built-ins give).
#include <cuda_bf16.h>

extern "C" __global__ void bundle_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hadd(a[i], __float2bfloat16(1.0f));
}
