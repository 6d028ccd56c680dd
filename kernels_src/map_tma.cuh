// asyncrt map op, TMA path (sm_90+): each CTA streams its tiles through a
// ring of shared-memory stages (by default one tile and one stage per CTA,
// the grid covering every tile; a persistent grid is a tuning option). Thread 0 fills a stage with one
// cp.async.bulk per input, completing on the stage's `full` mbarrier by
// transaction count; all threads compute from shared memory; each warp then
// arrives on the stage's `empty` mbarrier, and thread 0 waits for it before
// refilling. Stage s serves this CTA's tiles s, s + stages, ...: the i-th
// use of a stage is phase i / stages of both barriers, so waits use parity
// (i / stages) & 1.
//
// Results go out as 16-byte vector stores, or (ASYNCRT_MAP_STORE_BULK) into the
// stage's output region, from which thread 0 sends them with one bulk store
// per output once every warp has arrived. Then the stage is refilled one
// tile later, after the bulk store has read it (wait_group.read), so the
// outputs of a refilled stage are never overwritten while being stored.
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

// Output k of pack j into the stage's output region k (packs contiguous).
template <class Op>
struct asyncrt_map_smem_sink {
    uint4 *out;
    unsigned j;
    template <int K, int Vecs, typename T>
    __device__ __forceinline__ void put(unsigned long long, unsigned long long, const uint4 *v) const
    {
        uint4 *region = out + asyncrt_map_tiles<Op>::tile * asyncrt_map_out_offset<Op>(K);
#pragma unroll
        for (int c = 0; c < Vecs; c++) region[j * Vecs + c] = v[c];
    }
};

// One bulk group: every output of the tile at `first`, from the stage.
template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_tma_store(const P &p, const unsigned char *out, unsigned long long first,
                                                      unsigned count)
{
    constexpr unsigned tile = asyncrt_map_tiles<Op>::tile;
    const unsigned long long e = p.head + first * Op::pack;
#pragma unroll
    for (int k = 0; k < Op::outputs; k++)
        asyncrt_cp_async_bulk_s2g(reinterpret_cast<unsigned char *>(p.ptr[Op::inputs + k]) + e * Op::out_size[k],
                                  out + tile * 16u * asyncrt_map_out_offset<Op>(k), count * Op::out_vecs[k] * 16u);
    asyncrt_cp_async_bulk_commit_group();
}

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_tma(const P &p)
{
    typedef asyncrt_map_tiles<Op> tiles;
    constexpr bool bulk = Op::store == ASYNCRT_MAP_STORE_BULK;
    extern __shared__ __align__(128) unsigned char asyncrt_map_smem[];
    __shared__ unsigned long long full[Op::stages], empty[Op::stages];

    asyncrt_map_edges<Op>(p);
    const tiles t(p.packs);
    const unsigned long long mine = t.mine;
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
            const unsigned long long first = t.first(i);
            asyncrt_map_tma_fill<Op>(p, asyncrt_map_smem + i * tiles::stage_bytes, first,
                                     tiles::count(p.packs, first), &full[i]);
        }

    for (unsigned long long i = 0; i < mine; i++) {
        const unsigned s = static_cast<unsigned>(i % Op::stages);
        const unsigned parity = static_cast<unsigned>(i / Op::stages) & 1u;
        const unsigned long long first = t.first(i);
        const unsigned count = tiles::count(p.packs, first);
        unsigned char *stage = asyncrt_map_smem + s * tiles::stage_bytes;

        asyncrt_mbarrier_wait_parity(&full[s], parity);
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) {
                uint4 v[Op::in_vec_total];
                asyncrt_map_load_stage<Op>(stage, j, v);
                if (bulk)
                    Op::compute_store(p, v, p.head + (first + j) * Op::pack,
                                      asyncrt_map_smem_sink<Op>{reinterpret_cast<uint4 *>(stage + tiles::in_bytes), j});
                else
                    Op::compute_store(p, v, p.head + (first + j) * Op::pack, asyncrt_map_global_sink<Op::store>());
            }
        }
        if (bulk) asyncrt_fence_proxy_async_shared_cta(); // this thread's outputs, before the bulk store
        __syncwarp(); // the whole warp has read the stage (and written its outputs)
        if ((threadIdx.x & 31) == 0) asyncrt_mbarrier_arrive(&empty[s]);

        if (threadIdx.x != 0) continue;
        if (bulk) {
            asyncrt_mbarrier_wait_parity(&empty[s], parity); // every warp is done with it
            asyncrt_map_tma_store<Op>(p, stage + tiles::in_bytes, first, count);
            const unsigned long long prev = i - 1; // its store is the older of the two pending
            if (i >= 1 && prev + Op::stages < mine) {
                asyncrt_cp_async_bulk_wait_group_read<1>();
                const unsigned long long next = t.first(prev + Op::stages);
                const unsigned ps = static_cast<unsigned>(prev % Op::stages);
                asyncrt_map_tma_fill<Op>(p, asyncrt_map_smem + ps * tiles::stage_bytes, next,
                                         tiles::count(p.packs, next), &full[ps]);
            }
        } else if (i + Op::stages < mine) {
            asyncrt_mbarrier_wait_parity(&empty[s], parity); // every warp is done with it
            const unsigned long long next = t.first(i + Op::stages);
            asyncrt_map_tma_fill<Op>(p, stage, next, tiles::count(p.packs, next), &full[s]);
        }
    }
    // The shared memory must outlive the bulk stores reading it.
    if (bulk && threadIdx.x == 0) asyncrt_cp_async_bulk_wait_group<0>();
}
