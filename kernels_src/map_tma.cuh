// asyncrt map op, TMA path (sm_90+): a persistent grid streams tiles through
// a ring of shared-memory stages. Thread 0 fills a stage with one
// cp.async.bulk per input, completing on the stage's `full` mbarrier by
// transaction count; all threads compute from shared memory and store
// 16-byte vectors straight to global memory; each warp then arrives on the
// stage's `empty` mbarrier, and thread 0 waits for it before refilling.
// Stage s serves this CTA's tiles s, s + stages, ...: the i-th use of a
// stage is phase i / stages of both barriers, so waits use parity
// (i / stages) & 1.
#pragma once

#include <asyncrt/map_common.cuh>

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_tma_fill(const P &p, unsigned char *stage, unsigned long long first,
                                                     unsigned count, unsigned long long *full)
{
    constexpr unsigned tile = asyncrt_map_tiles<Op>::tile;
    asyncrt_mbarrier_arrive_expect_tx(full, count * Op::in_vec_total * 16u);
    const unsigned long long e = p.head + first * Op::pack; // 16-byte aligned in every array
#pragma unroll
    for (int k = 0; k < Op::inputs; k++)
        asyncrt_cp_async_bulk_g2s(stage + tile * 16u * asyncrt_map_vec_offset<Op>(k),
                                  reinterpret_cast<const unsigned char *>(p.ptr[k]) + e * Op::in_size[k],
                                  count * Op::in_vecs[k] * 16u, full);
}

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_tma(const P &p)
{
    typedef asyncrt_map_tiles<Op> tiles;
    extern __shared__ __align__(128) unsigned char asyncrt_map_smem[];
    __shared__ unsigned long long full[Op::stages], empty[Op::stages];

    asyncrt_map_edges<Op>(p);
    const unsigned long long mine = tiles::mine(p.packs);
    if (mine == 0) return; // the same for the whole CTA, before any barrier

    if (threadIdx.x == 0) {
        for (int s = 0; s < Op::stages; s++) {
            asyncrt_mbarrier_init(&full[s], 1);                 // thread 0's arrive.expect_tx
            asyncrt_mbarrier_init(&empty[s], Op::threads / 32); // one arrive per warp
        }
        asyncrt_fence_mbarrier_init(); // visible to the async proxy before the first copy
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (unsigned long long i = 0; i < mine && i < Op::stages; i++) {
            const unsigned long long first = tiles::first(i);
            asyncrt_map_tma_fill<Op>(p, asyncrt_map_smem + i * tiles::stage_bytes, first,
                                     tiles::count(p.packs, first), &full[i]);
        }

    for (unsigned long long i = 0; i < mine; i++) {
        const unsigned s = static_cast<unsigned>(i % Op::stages);
        const unsigned parity = static_cast<unsigned>(i / Op::stages) & 1u;
        const unsigned long long first = tiles::first(i);
        const unsigned count = tiles::count(p.packs, first);
        const unsigned char *stage = asyncrt_map_smem + s * tiles::stage_bytes;

        asyncrt_mbarrier_wait_parity(&full[s], parity);
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) {
                uint4 v[Op::in_vec_total];
                asyncrt_map_load_stage<Op>(stage, j, v);
                Op::compute_store(p, v, p.head + (first + j) * Op::pack);
            }
        }
        __syncwarp(); // the whole warp has read the stage
        if ((threadIdx.x & 31) == 0) asyncrt_mbarrier_arrive(&empty[s]);

        if (threadIdx.x == 0 && i + Op::stages < mine) {
            asyncrt_mbarrier_wait_parity(&empty[s], parity); // every warp is done with it
            const unsigned long long next = tiles::first(i + Op::stages);
            asyncrt_map_tma_fill<Op>(p, asyncrt_map_smem + s * tiles::stage_bytes, next,
                                     tiles::count(p.packs, next), &full[s]);
        }
    }
}
