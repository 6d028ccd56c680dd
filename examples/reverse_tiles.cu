// A kernel that needs headers of the CUDA toolkit (libcu++'s cuda::barrier),
// for bundle_deploy.c: asyncrt-bundle packs them, so that a machine with
// only the driver can compile it.
#include <cuda/barrier>

// Each block reverses its tile of x in place: every thread reads its element,
// all arrive and wait at the barrier, then each writes its mirror's.
extern "C" __global__ void reverse_tiles(float *x, int n)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    bar.arrive_and_wait();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (j < n) x[j] = v;
}
