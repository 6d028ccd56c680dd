// out[i] = a * in[i] + b, each block staging a tile of `in` through shared
// memory with the copy hardware of the device it was compiled for:
//   sm_90+: one bulk copy (TMA engine) completing on an mbarrier's byte count;
//   sm_80+: cp.async (LDGSTS), waited on with commit/wait_group;
//   older: ordinary loads.
// Run it:  asyncrt-run examples/stage_scale.cu --arch auto  (see tools/demo.sh)
#include <asyncrt/device.cuh>

#define TILE 2048 // floats per block: 8 KiB of shared memory

extern "C" __global__ void stage_scale(const float *in, float *out, float a, float b, int n)
{
    __shared__ alignas(128) float tile[TILE];
    const int base = blockIdx.x * TILE;
    const int count = min(TILE, n - base);
#if ASYNCRT_HAS_TMA
    __shared__ unsigned long long full;
    // A bulk copy moves multiples of 16 bytes from 16-byte aligned addresses:
    // cuMemAlloc'd `in` is, and every tile starts 8 KiB apart. A ragged tail
    // tile copies its 16-byte part in bulk and the rest with loads.
    const int bulk = count & ~3;
    if (threadIdx.x == 0) {
        asyncrt_mbarrier_init(&full, 1);
        asyncrt_fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asyncrt_mbarrier_arrive_expect_tx(&full, bulk * 4u);
        if (bulk) asyncrt_cp_async_bulk_g2s(tile, in + base, bulk * 4u, &full);
    }
    for (int i = bulk + threadIdx.x; i < count; i += blockDim.x) tile[i] = in[base + i];
    asyncrt_mbarrier_wait_parity(&full, 0);
    __syncthreads(); // the tail's ordinary stores
#elif ASYNCRT_HAS_CP_ASYNC
    for (int i = threadIdx.x; i < count; i += blockDim.x) asyncrt_cp_async_ca<4>(&tile[i], &in[base + i]);
    asyncrt_cp_async_commit_group();
    asyncrt_cp_async_wait_all();
    __syncthreads();
#else
    for (int i = threadIdx.x; i < count; i += blockDim.x) tile[i] = in[base + i];
    __syncthreads();
#endif
    for (int i = threadIdx.x; i < count; i += blockDim.x) out[base + i] = a * tile[i] + b;
}
