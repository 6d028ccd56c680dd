// asyncrt map op, plain path (any arch): a persistent grid where each thread
// loads all its packs of a tile in 16-byte vectors before computing any, so
// packs_per_thread loads per input are in flight at once.
#pragma once

#include <asyncrt/map_common.cuh>

template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_plain(const P &p)
{
    typedef asyncrt_map_tiles<Op> tiles;
    asyncrt_map_edges<Op>(p);
    const tiles t(p.packs);
    for (unsigned long long i = 0; i < t.mine; i++) {
        const unsigned long long first = t.first(i);
        const unsigned count = tiles::count(p.packs, first);
        uint4 v[Op::packs_per_thread][Op::in_vec_total];
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) {
                const unsigned long long e = p.head + (first + j) * Op::pack;
#pragma unroll
                for (int k = 0; k < Op::inputs; k++) {
                    const uint4 *src = reinterpret_cast<const uint4 *>(
                        reinterpret_cast<const unsigned char *>(p.ptr[k]) + e * Op::in_size[k]);
#pragma unroll
                    for (int c = 0; c < Op::in_vecs[k]; c++)
                        v[r][asyncrt_map_vec_offset<Op>(k) + c] = asyncrt_map_load_nc(src + c);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < Op::packs_per_thread; r++) {
            const unsigned j = threadIdx.x + r * Op::threads;
            if (j < count) Op::compute_store(p, v[r], p.head + (first + j) * Op::pack, asyncrt_map_global_sink<Op::store>());
        }
    }
}
