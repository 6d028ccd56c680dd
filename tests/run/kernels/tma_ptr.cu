// A kernel taking its tensor map by pointer (const CUtensorMap*), the form
// common in Hopper GEMMs, where maps live in global memory. asyncrt-run
// passes one with --tmap t=BUF:box=... --arg tmapptr:t. Each block copies one
// 32x16 tile of `in` into shared memory with TMA and writes 2*x + 1 to the
// same place in `out` with plain stores (row-major, `width` columns).
#include <cuda.h> // CUtensorMap
#include <cuda/barrier>

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

constexpr int TILE_W = 32;
constexpr int TILE_H = 16;

extern "C" __global__ void tile_from_map_pointer(const CUtensorMap *in, float *out, int width, int height)
{
    __shared__ alignas(128) float tile[TILE_H][TILE_W];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    const int x = blockIdx.x * TILE_W, y = blockIdx.y * TILE_H;
    barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, in, x, y, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    for (int i = threadIdx.x; i < TILE_H * TILE_W; i += blockDim.x) {
        int r = y + i / TILE_W, c = x + i % TILE_W;
        if (r < height && c < width) out[r * width + c] = 2.0f * tile[i / TILE_W][i % TILE_W] + 1.0f;
    }
}
