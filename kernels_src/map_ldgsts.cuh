// asyncrt map op, LDGSTS path (sm_80+): a persistent grid where every thread
// runs its own cp.async pipeline of `stages` groups. A thread copies, 16
// bytes at a time, exactly the packs it later computes, so waiting on its
// own groups (wait_group) is all the synchronisation there is: no barrier.
// Iteration i commits the group of tile i + stages - 1 (empty past the end,
// so the count stays uniform), after which stages - 1 younger groups may
// stay pending while tile i's has landed.
#pragma once

#include <asyncrt/map_common.cuh>

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_ldgsts_fill(const P &p, unsigned char *stage, unsigned long long i,
                                                        const asyncrt_map_tiles<Op> &t)
{
    typedef asyncrt_map_tiles<Op> tiles;
    if (i < t.mine) {
        const unsigned long long first = t.first(i);
        const unsigned count = tiles::count(p.packs, first);
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) {
                const unsigned long long e = p.head + (first + j) * Op::pack;
#pragma unroll
                for (int k = 0; k < Op::inputs; k++) {
                    uint4 *region = reinterpret_cast<uint4 *>(stage) + tiles::tile * asyncrt_map_vec_offset<Op>(k);
                    const uint4 *src = reinterpret_cast<const uint4 *>(
                        reinterpret_cast<const unsigned char *>(p.ptr[k]) + e * Op::in_size[k]);
#pragma unroll
                    for (int c = 0; c < Op::in_vecs[k]; c++)
                        asyncrt_cp_async_cg(region + j * Op::in_vecs[k] + c, src + c);
                }
            }
        }
    }
    asyncrt_cp_async_commit_group();
}

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_ldgsts(const P &p)
{
    typedef asyncrt_map_tiles<Op> tiles;
    extern __shared__ __align__(128) unsigned char asyncrt_map_smem[];

    asyncrt_map_edges<Op>(p);
    const tiles t(p.packs);
    const unsigned long long mine = t.mine;
    if (mine == 0) return;

    for (int i = 0; i < Op::stages - 1; i++)
        asyncrt_map_ldgsts_fill<Op>(p, asyncrt_map_smem + i * tiles::stage_bytes, i, t);

    for (unsigned long long i = 0; i < mine; i++) {
        const unsigned long long ahead = i + Op::stages - 1; // refills the stage tile i - 1 used
        asyncrt_map_ldgsts_fill<Op>(p, asyncrt_map_smem + (ahead % Op::stages) * tiles::stage_bytes, ahead, t);
        asyncrt_cp_async_wait_group<Op::stages - 1>();

        const unsigned long long first = t.first(i);
        const unsigned count = tiles::count(p.packs, first);
        const unsigned char *stage = asyncrt_map_smem + (i % Op::stages) * tiles::stage_bytes;
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) {
                uint4 v[Op::in_vec_total];
                asyncrt_map_load_stage<Op>(stage, j, v);
                Op::compute_store(p, v, p.head + (first + j) * Op::pack, asyncrt_map_global_sink<Op::store>());
            }
        }
    }
}
