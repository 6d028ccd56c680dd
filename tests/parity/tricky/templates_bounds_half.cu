// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel 'axpy_t<__nv_bfloat16, 4>' --grid 256 --block 256 --buf x=bf16:1048576:rand=4 --buf y=bf16:1048576:rand=5 --buf z=f16:1048576:poison --arg buf:x --arg buf:y --arg buf:z --arg i32:1048576
// parity: compare=z:exact
// A template with __launch_bounds__ (a register cap), bf16 in, half out.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
template <typename T, int UNROLL>
__global__ void __launch_bounds__(256, 4) axpy_t(const T *x, const T *y, __half *z, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
        if (i + u < n) z[i + u] = __float2half(__bfloat162float(x[i + u]) * 1.5f + __bfloat162float(y[i + u]));
}
template __global__ void axpy_t<__nv_bfloat16, 4>(const __nv_bfloat16 *, const __nv_bfloat16 *, __half *, int);
