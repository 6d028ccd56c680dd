// asyncrt 2D tile map and transpose: out[y][x] = f(in[y][x]) or, transposed,
// out[x][y] = f(in[y][x]). The block math every path shares, and the plain
// and LDGSTS paths (the TMA path is tile_transpose_tma.cuh).
//
// The runtime generates a struct Op with
//   T, C             storage type (2 or 4 bytes) and the type f computes in
//   threads, stages  (threads a multiple of 64)
//   transpose        whether out is the transpose
//   apply(v, y, x, rows, cols)   f of element (y, x) whose value is v
//
// Geometry. A sub-tile is S x S elements, S = 128 / sizeof(T): each of its
// rows is 128 bytes, 8 vectors of V = 16 / sizeof(T) elements. It splits
// into 8 x 8 blocks of V x V elements, one per thread, so 64 threads cover a
// sub-tile; a tile is K = threads / 64 sub-tiles stacked vertically (H = K*S
// rows, S columns). A thread loads the V row vectors of its block,
// transposes them in registers and stores V vectors: no thread ever reads a
// column of shared memory.
//
// Block (bi, bj) of a sub-tile (block row bi, block column bj) goes to the
// thread with lane bits l = tid & 7, q = (tid >> 3) & 7, where bi = l and
// bj = (l + q) & 7. Within a quarter warp (8 lanes: one 16-byte access
// phase) both bi and bj are then all different, which is what keeps both
// the reads (row bi*V + i, vector bj) and the writes of the transpose (row
// bj*V + j, vector bi) free of bank conflicts, in the 128-byte swizzled
// layout of the TMA path (vector slot c ^ (row & 7)) as well as below.
#pragma once

#include <asyncrt/tile_common.cuh>

template <class Op>
struct asyncrt_tile_geom {
    typedef typename Op::T T;
    static constexpr int E = sizeof(T), V = 16 / E, S = 128 / E, K = Op::threads / 64, H = K * S;
    static_assert(E == 2 || E == 4, "asyncrt tile ops move 2- or 4-byte elements");
    static_assert(Op::threads % 64 == 0 && Op::threads <= 256, "asyncrt tile ops: threads must be 64..256 in 64s");

    int k, bi, bj; // this thread's sub-tile and block
    __device__ __forceinline__ asyncrt_tile_geom()
    {
        const int t = static_cast<int>(threadIdx.x);
        k = t >> 6;
        bi = t & 7;
        bj = (bi + ((t >> 3) & 7)) & 7;
    }
    // Tile t's first row and column.
    static __device__ __forceinline__ int y0(const asyncrt_tile_params &p, int t) { return (t / p.tiles_x) * H; }
    static __device__ __forceinline__ int x0(const asyncrt_tile_params &p, int t) { return (t % p.tiles_x) * S; }
    // The first element of this thread's block in tile t.
    __device__ __forceinline__ int y(const asyncrt_tile_params &p, int t) const { return y0(p, t) + k * S + bi * V; }
    __device__ __forceinline__ int x(const asyncrt_tile_params &p, int t) const { return x0(p, t) + bj * V; }
};

// Applies f to a block whose rows are in[0..V), giving out[0..V): the rows
// of the result block, transposed or not.
template <class Op>
__device__ __forceinline__ void asyncrt_tile_block(const uint4 *in, uint4 *out, int y, int x, int rows, int cols)
{
    typedef typename Op::T T;
    constexpr int E = sizeof(T), V = 16 / E;
    unsigned r[V][V];
#pragma unroll
    for (int i = 0; i < V; i++)
#pragma unroll
        for (int j = 0; j < V; j++) {
            const T e = asyncrt_tile_bits<T>::from(asyncrt_tile_elem<E>(in[i], j));
            const unsigned b =
                asyncrt_tile_bits<T>::to(asyncrt_conv<T>::out(Op::apply(asyncrt_conv<T>::in(e), y + i, x + j, rows, cols)));
            if (Op::transpose) r[j][i] = b;
            else r[i][j] = b;
        }
#pragma unroll
    for (int i = 0; i < V; i++) out[i] = asyncrt_tile_pack<E>(r[i]);
}

// Stores a result block straight to global memory.
template <class Op>
__device__ __forceinline__ void asyncrt_tile_block_store(const asyncrt_tile_params &p, const uint4 *out, int y, int x)
{
    constexpr int E = sizeof(typename Op::T), V = 16 / E;
#pragma unroll
    for (int i = 0; i < V; i++) {
        if (Op::transpose) asyncrt_tile_store_vec<E>(p, p.cols, p.rows, x + i, y, out[i]);
        else asyncrt_tile_store_vec<E>(p, p.rows, p.cols, y + i, x, out[i]);
    }
}

// Plain path: each thread loads its block's V vectors (all in flight at
// once), transforms them and stores them.
template <class Op>
__device__ __forceinline__ void asyncrt_tile_transpose_plain(const asyncrt_tile_params &p)
{
    typedef asyncrt_tile_geom<Op> G;
    const G g;
    for (int t = static_cast<int>(blockIdx.x); t < p.tiles; t += static_cast<int>(gridDim.x)) {
        const int y = g.y(p, t), x = g.x(p, t);
        uint4 in[G::V], out[G::V];
#pragma unroll
        for (int i = 0; i < G::V; i++) in[i] = asyncrt_tile_load_vec<G::E>(p, y + i, x);
        asyncrt_tile_block<Op>(in, out, y, x, p.rows, p.cols);
        asyncrt_tile_block_store<Op>(p, out, y, x);
    }
}

// LDGSTS path: every thread runs its own cp.async pipeline of `stages`
// groups, copying exactly the vectors it later reads, so wait_group is all
// the synchronisation there is. A stage holds vector i of thread t at
// [i][t], so the 8 lanes of an access phase hit 8 different bank groups.
template <class Op>
__device__ __forceinline__ void asyncrt_tile_transpose_fill(const asyncrt_tile_params &p, unsigned char *stage, int j,
                                                            int mine, const asyncrt_tile_geom<Op> &g)
{
    typedef asyncrt_tile_geom<Op> G;
    if (j < mine) {
        const int t = asyncrt_tile_index(j), y = g.y(p, t), x = g.x(p, t);
#pragma unroll
        for (int i = 0; i < G::V; i++)
            asyncrt_tile_fill_vec<G::E, true>(stage + (i * Op::threads + threadIdx.x) * 16, p, y + i, x);
    }
    asyncrt_cp_async_commit_group(); // empty past the end, so the count of groups stays uniform
}

template <class Op>
__device__ __forceinline__ void asyncrt_tile_transpose_ldgsts(const asyncrt_tile_params &p)
{
    typedef asyncrt_tile_geom<Op> G;
    constexpr int stage_bytes = G::V * Op::threads * 16;
    unsigned char *smem = asyncrt_tile_smem();
    const G g;
    const int mine = asyncrt_tile_count_mine(p.tiles);

    for (int j = 0; j < Op::stages - 1; j++) asyncrt_tile_transpose_fill<Op>(p, smem + j * stage_bytes, j, mine, g);
    for (int j = 0; j < mine; j++) {
        const int ahead = j + Op::stages - 1; // refills the stage tile j - 1 used
        asyncrt_tile_transpose_fill<Op>(p, smem + (ahead % Op::stages) * stage_bytes, ahead, mine, g);
        asyncrt_cp_async_wait_group<Op::stages - 1>();

        const unsigned char *stage = smem + (j % Op::stages) * stage_bytes;
        const int t = asyncrt_tile_index(j), y = g.y(p, t), x = g.x(p, t);
        uint4 in[G::V], out[G::V];
#pragma unroll
        for (int i = 0; i < G::V; i++)
            in[i] = *reinterpret_cast<const uint4 *>(stage + (i * Op::threads + threadIdx.x) * 16);
        asyncrt_tile_block<Op>(in, out, y, x, p.rows, p.cols);
        asyncrt_tile_block_store<Op>(p, out, y, x);
    }
}
