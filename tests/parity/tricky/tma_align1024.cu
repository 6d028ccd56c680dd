// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel tile_sum --grid 128,64 --block 128 --smem 9216 --buf x=f32:4096x4096:rand=2 --buf y=f32:4096:fill=0 --tmap t=x:box=32,64:swizzle=128b --arg tmap:t --arg buf:y
// parity: compare=y:rtol=1e-4,atol=1e-2
// why: 128 blocks add their row sums into y with float atomics, in an order the hardware picks: each
// of 4096 terms (|v| < 1, partial sums below 64) may round by 2^-24 of the partial sum, at most ~1.6e-2
// A TMA load with the 128-byte swizzle into a 1024-byte aligned dynamic
// buffer, completed on an mbarrier: the swizzle pattern repeats every 1024
// bytes, so the buffer must start on that boundary.
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>
extern "C" __global__ void tile_sum(const __grid_constant__ CUtensorMap t, float *y)
{
    __shared__ uint64_t bar;
    extern __shared__ __align__(1024) float tile[]; // 64 rows of 32 floats, swizzled 128B rows
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int c[2] = {(int)blockIdx.x * 32, (int)blockIdx.y * 64};
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                             &bar, 32 * 64 * 4);
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, tile, &t, c, &bar);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    if (threadIdx.x < 64) {
        float s = 0;
        for (int j = 0; j < 32; j++) s += tile[threadIdx.x * 32 + j]; // a row: swizzle permutes within it
        atomicAdd(&y[blockIdx.y * 64 + threadIdx.x], s);
    }
}
