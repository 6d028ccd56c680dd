// asyncrt 2D tile map and transpose, TMA path (sm_90+). Geometry and block
// math: tile_transpose.cuh.
//
// A CTA streams its tiles through a ring of `stages` input buffers (the
// runtime launches one CTA per tile with one stage: measured fastest). Thread 0 loads a whole tile (S columns x H rows, box {S, H}) with
// one cp.async.bulk.tensor that completes on the stage's `full` mbarrier;
// the map uses the 128-byte swizzle, so vector c of row r sits in slot
// c ^ (r & 7) of its 128-byte row, and out-of-bounds elements read as zero.
// Each thread reads its block, transforms it in registers and writes it into
// one of two output buffers in the same swizzled layout, which thread 0
// stores with one cp.async.bulk.tensor per sub-tile (box {S, S}; the TMA
// unit clips what falls outside the output).
//
// Per tile j (stage s = j % stages, output buffer o = j & 1):
//   wait full[s] (parity (j / stages) & 1); read the block from stage s
//   thread 0: wait until at most one bulk store still reads (so the store of
//             tile j - 2, from buffer o, is done with it)
//   barrier A: every thread has read stage s, and buffer o is free
//   thread 0: refill stage s with tile j + stages
//   write the block to buffer o; fence.proxy.async.shared::cta (the
//   generic-proxy writes become visible to the TMA unit)
//   barrier B; thread 0 issues the stores of buffer o and commits the group
#pragma once

#include <asyncrt/tile_transpose.cuh>

template <class Op>
struct asyncrt_tile_tma_layout {
    typedef asyncrt_tile_geom<Op> G;
    static constexpr int tile_bytes = G::H * 128; // one input stage or one output buffer
    static constexpr int out_offset = Op::stages * tile_bytes;
    static constexpr int bar_offset = out_offset + 2 * tile_bytes;
};

template <class Op>
__device__ __forceinline__ void asyncrt_tile_transpose_tma_load(const asyncrt_tile_params &p, unsigned char *stage,
                                                                unsigned long long *full, int t)
{
    typedef asyncrt_tile_geom<Op> G;
    asyncrt_mbarrier_arrive_expect_tx(full, asyncrt_tile_tma_layout<Op>::tile_bytes); // the whole box, even OOB
    asyncrt_tma_load_2d(stage, &p.in_map, G::x0(p, t), G::y0(p, t), full);
}

template <class Op>
__device__ __forceinline__ void asyncrt_tile_transpose_tma(const asyncrt_tile_params &p)
{
    typedef asyncrt_tile_geom<Op> G;
    typedef asyncrt_tile_tma_layout<Op> L;
    unsigned char *smem = asyncrt_tile_smem();
    unsigned long long *full = reinterpret_cast<unsigned long long *>(smem + L::bar_offset);
    const G g;
    const int mine = asyncrt_tile_count_mine(p.tiles);
    if (mine == 0) return; // the same for the whole CTA, before any barrier

    if (threadIdx.x == 0) {
        asyncrt_prefetch_tensormap(&p.in_map);
        asyncrt_prefetch_tensormap(&p.out_map);
        for (int s = 0; s < Op::stages; s++) asyncrt_mbarrier_init(&full[s], 1); // thread 0's arrive.expect_tx
        asyncrt_fence_mbarrier_init(); // visible to the async proxy before the first load
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int j = 0; j < mine && j < Op::stages; j++)
            asyncrt_tile_transpose_tma_load<Op>(p, smem + j * L::tile_bytes, &full[j], asyncrt_tile_index(j));

    for (int j = 0; j < mine; j++) {
        const int s = j % Op::stages, t = asyncrt_tile_index(j);
        const int y = g.y(p, t), x = g.x(p, t);
        asyncrt_mbarrier_wait_parity(&full[s], static_cast<unsigned>(j / Op::stages) & 1u);
        uint4 in[G::V], out[G::V];
        asyncrt_tile_read_block<Op>(smem + s * L::tile_bytes, g, in);
        asyncrt_tile_block<Op>(in, out, y, x, p.rows, p.cols);

        unsigned char *obuf = smem + L::out_offset + (j & 1) * L::tile_bytes;
        if (threadIdx.x == 0) asyncrt_cp_async_bulk_wait_group_read<1>();
        __syncthreads(); // A
        if (threadIdx.x == 0 && j + Op::stages < mine)
            asyncrt_tile_transpose_tma_load<Op>(p, smem + s * L::tile_bytes, &full[s], asyncrt_tile_index(j + Op::stages));

        asyncrt_tile_write_block<Op>(obuf, g, out);
        asyncrt_fence_proxy_async_shared_cta();
        __syncthreads(); // B
        if (threadIdx.x == 0) {
            const int ty = G::y0(p, t), tx = G::x0(p, t);
            for (int kk = 0; kk < G::K && ty + kk * G::S < p.rows; kk++) {
                if (Op::transpose) asyncrt_tma_store_2d(&p.out_map, ty + kk * G::S, tx, obuf + kk * G::S * 128);
                else asyncrt_tma_store_2d(&p.out_map, tx, ty + kk * G::S, obuf + kk * G::S * 128);
            }
            asyncrt_cp_async_bulk_commit_group();
        }
    }
    if (threadIdx.x == 0) asyncrt_cp_async_bulk_wait_group<0>(); // shared memory must outlive the stores
}
