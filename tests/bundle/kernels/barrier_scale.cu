// A <cuda/barrier> kernel (bundled into tests/bundle/consumer.c): each block
// copies its slice into shared memory with cuda::memcpy_async, completed on
// a block-scope barrier, then writes it scaled.
#include <cuda/barrier>
#pragma nv_diag_suppress static_var_with_dynamic_init

extern "C" __global__ void bundle_scale(float *out, const float *in, float factor, int n)
{
    __shared__ float tile[256];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    int base = blockIdx.x * blockDim.x;
    int count = n - base < (int)blockDim.x ? n - base : (int)blockDim.x;
    if (threadIdx.x == 0) cuda::memcpy_async(tile, in + base, sizeof(float) * count, bar);
    bar.arrive_and_wait();
    if (base + (int)threadIdx.x < n) out[base + threadIdx.x] = factor * tile[threadIdx.x];
}
