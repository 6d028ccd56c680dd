// A <cuda/barrier> kernel (bundled into tests/bundle/consumer.c): each block
// stages its slice in shared memory, meets on a block-scope barrier, then
// writes it scaled. Plain stores, not cuda::memcpy_async onto the barrier:
// with CUDA 13.0 on the H100, compute-sanitizer's synccheck reports that
// form ("Barrier overflow" when one thread copies the tile, "Missing wait"
// when each copies its element) though its results are right.
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
    if ((int)threadIdx.x < count) tile[threadIdx.x] = in[base + threadIdx.x];
    bar.arrive_and_wait();
    if (base + (int)threadIdx.x < n) out[base + threadIdx.x] = factor * tile[threadIdx.x];
}
