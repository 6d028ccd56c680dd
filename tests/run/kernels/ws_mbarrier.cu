// Warp specialisation with mbarriers: warp 0 produces (one lane issues TMA
// bulk copies into a ring of STAGES shared buffers), the CONSUMERS threads of
// the other warps consume (out = 0.5 * in + 0.25) and hand each buffer back.
// Each buffer has a "full" barrier (1 arrival + the copy's bytes) and an
// "empty" barrier (one arrival per consumer thread). Launch with
// --block 160 (32 + CONSUMERS); block b handles `tiles` tiles of TILE floats
// starting at b * tiles * TILE.
#include <cuda/ptx>
#include <cuda/std/cstdint>

namespace ptx = cuda::ptx;

constexpr int TILE = 1024;
constexpr int STAGES = 4;
constexpr int CONSUMERS = 128;
constexpr unsigned TILE_BYTES = TILE * sizeof(float);

__device__ static void wait_parity(cuda::std::uint64_t *bar, unsigned parity)
{
    while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
    }
}

extern "C" __global__ void __launch_bounds__(32 + CONSUMERS)
ws_producer_consumer(const float *in, float *out, int tiles)
{
    __shared__ alignas(128) float buf[STAGES][TILE];
    __shared__ cuda::std::uint64_t full[STAGES], empty[STAGES];
    const size_t base = (size_t)blockIdx.x * tiles * TILE;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            ptx::mbarrier_init(&full[s], 1);
            ptx::mbarrier_init(&empty[s], CONSUMERS);
        }
        // Make the initialised barriers visible to the async proxy (TMA).
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();

    if (threadIdx.x < 32) { // producer warp
        if (threadIdx.x != 0) return;
        for (int t = 0; t < tiles; ++t) {
            const int s = t % STAGES;
            const unsigned use = t / STAGES;
            // Use u of a buffer waits for the consumers' release of use u-1.
            if (use > 0) wait_parity(&empty[s], (use - 1) & 1);
            (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                                 TILE_BYTES);
            ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, buf[s], in + base + (size_t)t * TILE,
                               TILE_BYTES, &full[s]);
        }
        return;
    }

    const int c = threadIdx.x - 32; // consumer index
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        wait_parity(&full[s], (t / STAGES) & 1);
        for (int i = c; i < TILE; i += CONSUMERS) out[base + (size_t)t * TILE + i] = 0.5f * buf[s][i] + 0.25f;
        (void)ptx::mbarrier_arrive(&empty[s]);
    }
}
