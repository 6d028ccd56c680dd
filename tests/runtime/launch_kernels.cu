// Kernels of test_launch_gpu.c (test_launch.c compiles them on a CPU too).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// out[i] = tmp[(i + 1) % n] + tmp[n - 1 - i] with tmp = 2 * in: every block
// reads what other blocks wrote before the grid-wide barrier.
extern "C" __global__ void grid_sync_mix(const float *in, float *tmp, float *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    for (int i = (int)grid.thread_rank(); i < n; i += (int)grid.size()) tmp[i] = 2.0f * in[i];
    grid.sync();
    for (int i = (int)grid.thread_rank(); i < n; i += (int)grid.size())
        out[i] = tmp[(i + 1) % n] + tmp[n - 1 - i];
}

// Programmatic dependent launch: the producer lets its dependent start at
// once, then works slowly; the consumer must wait for the producer's writes.
extern "C" __global__ void pdl_producer(const float *in, float *mid, int n)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    long long start = clock64();
    while (clock64() - start < 200000) {
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) mid[i] = 3.0f * in[i];
}

extern "C" __global__ void pdl_consumer(const float *mid, float *out, int n)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = mid[i] + 1.0f;
}

// One value per block: its rank in the cluster and the cluster's size.
extern "C" __global__ void cluster_rank(unsigned *out)
{
#if __CUDA_ARCH__ >= 900
    extern __shared__ unsigned char scratch[];
    auto c = cg::this_cluster();
    scratch[threadIdx.x] = (unsigned char)threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = c.block_rank() + 100u * c.num_blocks() + scratch[0];
#endif
}

extern "C" __global__ void add_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
