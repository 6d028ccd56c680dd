// TMA 2D tile copies with tensor maps, in the style of the CUDA programming
// guide's "Using TMA to transfer multi-dimensional arrays". Each block loads
// one TILE_H x TILE_W tile of `in` (128-byte swizzle), computes 2 * x + 1 on
// every element and stores the tile into `out`. Edge tiles are partial: the
// load fills out-of-bounds elements with zeros and the store clips them.
// Maps: --tmap in=...:box=32,16:swizzle=128b, same for out.
#include <cuda.h> // CUtensorMap
#include <cuda/barrier>

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

constexpr int TILE_W = 32; // 32 floats = 128 bytes: one swizzle span
constexpr int TILE_H = 16;

extern "C" __global__ void tile_axpb(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out)
{
    // 128-byte swizzling needs a 1024-byte aligned destination.
    __shared__ alignas(1024) float tile[TILE_H][TILE_W];
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
        cde::cp_async_bulk_tensor_2d_global_to_shared(&tile, &in, x, y, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(tile));
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));

    // Element-wise, so the swizzled order in shared memory does not matter.
    float *flat = &tile[0][0];
    for (int i = threadIdx.x; i < TILE_H * TILE_W; i += blockDim.x) flat[i] = 2.0f * flat[i] + 1.0f;

    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&out, x, y, &tile);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
        (&bar)->~barrier();
    }
}
