// asyncrt 2D stencil, TMA path (sm_90+). Geometry and compute:
// tile_stencil.cuh.
//
// The halo and the zero border come from the tensor map itself: thread 0
// loads box {box_w, TH + 2R} at coordinates {x0 - V, y0 - R} (negative at the
// top and left edges), and the TMA unit fills whatever lies outside the
// matrix with zeros. The box starts a whole 16-byte vector left of the tile
// because on the H100 (driver 580) a tensor load whose innermost coordinate
// times the element size is not a multiple of 16 bytes stops the kernel
// with CUDA_ERROR_ILLEGAL_INSTRUCTION, in bounds or not (x0 - R was exactly
// that unless R * E == 16). So box_w = TW + 2V, and column c of the tile is
// staged column V + c. A CTA streams its tiles (by default one) through a
// ring of `stages` such buffers completed on `full` mbarriers; the results go to one
// of two output buffers (TH x TW, no swizzle: a warp writes 32 consecutive
// elements of a row) that thread 0 stores with one cp.async.bulk.tensor each,
// clipped by the TMA unit at the right and bottom edges. The order of waits,
// barriers and fences per tile is that of tile_transpose_tma.cuh.
#pragma once

#include <asyncrt/tile_stencil.cuh>

template <class Op>
struct asyncrt_stencil_tma_layout {
    typedef asyncrt_stencil_geom<Op> G;
    static constexpr int box_bytes = Op::box_w * G::BH * G::E;     // the expect_tx count
    static constexpr int stage_bytes = (box_bytes + 1023) / 1024 * 1024;
    static constexpr int out_bytes = G::TW * G::TH * G::E;
    static constexpr int out_offset = Op::stages * stage_bytes;
    static constexpr int bar_offset = out_offset + 2 * out_bytes;
    static_assert(Op::box_w == G::TW + 2 * G::V && G::R <= G::V,
                  "asyncrt stencil: box_w must be TW + 2V (a vector of halo on each side, R <= V)");
};

template <class Op>
__device__ __forceinline__ void asyncrt_stencil_tma_load(const asyncrt_tile_params &p, unsigned char *stage,
                                                         unsigned long long *full, int t)
{
    typedef asyncrt_stencil_geom<Op> G;
    asyncrt_mbarrier_arrive_expect_tx(full, asyncrt_stencil_tma_layout<Op>::box_bytes); // the whole box, even OOB
    asyncrt_tma_load_2d(stage, &p.in_map, G::x0(p, t) - G::V, G::y0(p, t) - G::R, full); // x: 16-byte aligned
}

template <class Op>
__device__ __forceinline__ void asyncrt_stencil_tma(const asyncrt_tile_params &p)
{
    typedef asyncrt_stencil_geom<Op> G;
    typedef asyncrt_stencil_tma_layout<Op> L;
    typedef typename Op::T T;
    unsigned char *smem = asyncrt_tile_smem();
    unsigned long long *full = reinterpret_cast<unsigned long long *>(smem + L::bar_offset);
    const int mine = asyncrt_tile_count_mine(p.tiles);
    if (mine == 0) return; // the same for the whole CTA, before any barrier

    if (threadIdx.x == 0) {
        asyncrt_prefetch_tensormap(&p.in_map);
        asyncrt_prefetch_tensormap(&p.out_map);
        for (int s = 0; s < Op::stages; s++) asyncrt_mbarrier_init(&full[s], 1); // thread 0's arrive.expect_tx
        asyncrt_fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < mine && j < Op::stages; j++)
            asyncrt_stencil_tma_load<Op>(p, smem + j * L::stage_bytes, &full[j], asyncrt_tile_index(j));

    for (int j = 0; j < mine; j++) {
        const int s = j % Op::stages, t = asyncrt_tile_index(j);
        const int y = G::y0(p, t) + G::row(), x = G::x0(p, t) + G::col();
        asyncrt_mbarrier_wait_parity(&full[s], static_cast<unsigned>(j / Op::stages) & 1u);
        typename Op::C acc[G::OPT];
        asyncrt_stencil_compute<Op>(p, smem + s * L::stage_bytes, Op::box_w, G::V + G::col(), y, x, acc);

        T *obuf = reinterpret_cast<T *>(smem + L::out_offset + (j & 1) * L::out_bytes);
        if (threadIdx.x == 0) asyncrt_cp_async_bulk_wait_group_read<1>(); // the store of tile j - 2 has read obuf
        __syncthreads(); // A: stage s is read by all, obuf is free
        if (threadIdx.x == 0 && j + Op::stages < mine)
            asyncrt_stencil_tma_load<Op>(p, smem + s * L::stage_bytes, &full[s], asyncrt_tile_index(j + Op::stages));
#pragma unroll
        for (int o = 0; o < G::OPT; o++) obuf[(G::row() + o) * G::TW + G::col()] = asyncrt_conv<T>::out(acc[o]);
        asyncrt_fence_proxy_async_shared_cta(); // generic-proxy writes, then read by the TMA unit
        __syncthreads(); // B
        if (threadIdx.x == 0) {
            asyncrt_tma_store_2d(&p.out_map, G::x0(p, t), G::y0(p, t), obuf);
            asyncrt_cp_async_bulk_commit_group();
        }
    }
    if (threadIdx.x == 0) asyncrt_cp_async_bulk_wait_group<0>(); // shared memory must outlive the stores
}
