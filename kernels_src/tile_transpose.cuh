// asyncrt 2D tile map and transpose: out[y][x] = f(in[y][x]) or, transposed,
// out[x][y] = f(in[y][x]). The block math every path shares, and the plain
// and LDGSTS paths (the TMA path is tile_transpose_tma.cuh).
//
// The runtime generates a struct Op with
//   T, C             storage type (2 or 4 bytes) and the type f computes in
//   threads, stages  (threads a multiple of 64)
//   variant          plain and LDGSTS paths: 0 blocks, 1 rows, 2 staged (below)
//   l2               L2 prefetch hint of their loads (tile_common.cuh)
//   transpose        whether out is the transpose
//   apply(v, y, x, rows, cols)   f of element (y, x) whose value is v
//
// Geometry. A sub-tile is S x S elements, S = 128 / sizeof(T): each of its
// rows is 128 bytes, 8 vectors of V = 16 / sizeof(T) elements. It splits
// into 8 x 8 blocks of V x V elements, one per thread, so 64 threads cover a
// sub-tile; a tile is K = threads / 64 sub-tiles stacked vertically (H = K*S
// rows, S columns). A thread transposes its block of V row vectors in
// registers and writes V vectors: no thread ever reads a column.
//
// Block (bi, bj) of a sub-tile (block row bi, block column bj) goes to the
// thread with lane bits l = tid & 7, q = (tid >> 3) & 7, where bi = l and
// bj = (l + q) & 7. Within a quarter warp (8 lanes: one 16-byte access
// phase) both bi and bj are then all different, which is what keeps both
// the reads (row bi*V + i, vector bj) and the writes of the transpose (row
// bj*V + j, vector bi) free of bank conflicts in the 128-byte swizzled
// layout (vector slot c ^ (row & 7)) that the TMA path and the rows/staged
// variants below share.
//
// The variants of the plain and LDGSTS paths (ASYNCRT_TILE_TUNE=variant=...):
//   blocks  each thread moves its own block: V 16-byte loads (or cp.async)
//           and V 16-byte stores straight to global memory. A warp's access
//           then touches 8 rows (64 KiB apart at 16384 f32 columns) with 64
//           bytes each, which straddle 32-byte sectors (lanes bj = 5,6,7,0
//           of a row use halves of sectors 2 and 0): from the lane mapping,
//           every f32 warp instruction touches 20 sectors for 16 sectors of
//           data (80% sector efficiency), loads and stores alike, and the
//           other halves come from another warp. The plain path's
//           ld.global.nc can find them in L1; cp.async.cg bypasses L1, so
//           the LDGSTS path fetches them from L2 again. Measured on the H100
//           (tools/gpu-check.sh profile, ncu, 16384^2 f32): the LDGSTS
//           blocks kernel reads 62.2 M L2 sectors for the 33.6 M the tile
//           needs (1.85x), 80% bytes used per stored sector, 63% warps
//           active, 64.6% of DRAM peak: 71% of D2D, where plain blocks ran
//           at 85%. Shared-memory conflicts were negligible (0.11 M).
//   rows    the CTA copies the whole tile row by row, a warp 4 whole 128-byte
//           rows per instruction (every sector used once), into the swizzled
//           layout; a barrier; each thread reads its block as on the TMA
//           path and stores it straight to global memory as in blocks.
//   staged  as rows, and the result goes back into the same buffer (the
//           block write of the TMA path; a barrier before and after) and out
//           row by row: a warp stores 512 contiguous bytes (transpose, 256
//           threads) or 4 whole 128-byte rows, 16-byte st.global.cs each.
//           Both directions are then whole-sector and coalesced, as with
//           TMA. The default. A simulation of the lane mapping (2- and 4-byte
//           types, 64..256 threads) found no bank conflicts, yet ncu counts
//           0.30 M (ld) and 1.12 M (st) on the H100 (the cp.async fill
//           is the likely source; not chased, as the kernel is DRAM-bound):
//           it reads exactly 33.6 M L2 sectors, 100% bytes per stored
//           sector, 84% of DRAM peak, 94.1% of D2D (LDGSTS, sm_90 and
//           compute_80 builds alike). The price is two more barriers per
//           tile and a stage-sized buffer (16 KiB + 1 KiB at 256 threads).
// Registers (ptxas, sm_90, f32, 256 threads): blocks 36, rows 42, staged 54,
// which allows only 4 CTAs per SM (4 x 16 KiB of loads in flight), so the
// runtime caps the registers by default (__launch_bounds__(256, 6),
// ASYNCRT_TILE_TUNE=minctas=6): staged then takes 40 registers without
// spilling (sm_90 and sm_80 alike), 6 CTAs per SM. minctas=8 spills 12
// bytes on sm_90.
//           Measured figures: docs/performance.md (the lead's H100
//           run of asyncrt-bench --tile-sweep).
// #pragma once

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

// Byte offset of vector c of row r in a 1024-byte-aligned swizzled region.
__device__ __forceinline__ int asyncrt_tile_swizzle128(int r, int c)
{
    return r * 128 + ((c ^ (r & 7)) << 4);
}

// This thread's block from a swizzled tile (H rows of 128 bytes).
template <class Op>
__device__ __forceinline__ void asyncrt_tile_read_block(const unsigned char *tile, const asyncrt_tile_geom<Op> &g,
                                                        uint4 *in)
{
    typedef asyncrt_tile_geom<Op> G;
#pragma unroll
    for (int i = 0; i < G::V; i++)
        in[i] = *reinterpret_cast<const uint4 *>(tile + asyncrt_tile_swizzle128(g.k * G::S + g.bi * G::V + i, g.bj));
}

// This thread's result block into a swizzled tile: sub-tile k's S x S output
// (transposed: result row i is row bj*V + i of it, at vector bi).
template <class Op>
__device__ __forceinline__ void asyncrt_tile_write_block(unsigned char *tile, const asyncrt_tile_geom<Op> &g,
                                                         const uint4 *out)
{
    typedef asyncrt_tile_geom<Op> G;
#pragma unroll
    for (int i = 0; i < G::V; i++) {
        const int off = Op::transpose ? asyncrt_tile_swizzle128(g.k * G::S + g.bj * G::V + i, g.bi)
                                      : asyncrt_tile_swizzle128(g.k * G::S + g.bi * G::V + i, g.bj);
        *reinterpret_cast<uint4 *>(tile + off) = out[i];
    }
}

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
        for (int i = 0; i < G::V; i++) in[i] = asyncrt_tile_load_vec<G::E, Op::l2>(p, y + i, x);
        asyncrt_tile_block<Op>(in, out, y, x, p.rows, p.cols);
        asyncrt_tile_block_store<Op>(p, out, y, x);
    }
}

// Variant blocks, LDGSTS: every thread runs its own cp.async pipeline of `stages`
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
            asyncrt_tile_fill_vec<G::E, true, Op::l2>(stage + (i * Op::threads + threadIdx.x) * 16, p, y + i, x);
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

// Variants rows and staged (Async: LDGSTS, else plain): the CTA stages tile
// j row by row into the swizzled layout, V vectors per thread (vector u =
// i * threads + tid is vector u & 7 of row u >> 3).
template <class Op, bool Async>
__device__ __forceinline__ void asyncrt_tile_rows_fill(const asyncrt_tile_params &p, unsigned char *stage, int j,
                                                       int mine)
{
    typedef asyncrt_tile_geom<Op> G;
    if (j < mine) {
        const int t = asyncrt_tile_index(j), y0 = G::y0(p, t), x0 = G::x0(p, t);
#pragma unroll
        for (int i = 0; i < G::V; i++) {
            const int u = i * Op::threads + static_cast<int>(threadIdx.x), r = u >> 3, c = u & 7;
            asyncrt_tile_fill_vec<G::E, Async, Op::l2>(stage + asyncrt_tile_swizzle128(r, c), p, y0 + r, x0 + c * G::V);
        }
    }
    if constexpr (Async) asyncrt_cp_async_commit_group(); // empty past the end: the count stays uniform
}

// Variant staged: the result of tile t, written by asyncrt_tile_write_block,
// goes out row by row. Transposed, the tile's output is S rows of K
// sub-tile rows (8K vectors, contiguous in the output); else H rows of 8.
template <class Op>
__device__ __forceinline__ void asyncrt_tile_rows_store(const asyncrt_tile_params &p, const unsigned char *tile, int t)
{
    typedef asyncrt_tile_geom<Op> G;
    const int y0 = G::y0(p, t), x0 = G::x0(p, t);
#pragma unroll
    for (int i = 0; i < G::V; i++) {
        const int u = i * Op::threads + static_cast<int>(threadIdx.x);
        if (Op::transpose) {
            const int r = u / (8 * G::K), w = u % (8 * G::K), k = w >> 3, c = w & 7;
            const uint4 v = *reinterpret_cast<const uint4 *>(tile + asyncrt_tile_swizzle128(k * G::S + r, c));
            asyncrt_tile_store_vec<G::E>(p, p.cols, p.rows, x0 + r, y0 + k * G::S + c * G::V, v);
        } else {
            const int r = u >> 3, c = u & 7;
            const uint4 v = *reinterpret_cast<const uint4 *>(tile + asyncrt_tile_swizzle128(r, c));
            asyncrt_tile_store_vec<G::E>(p, p.rows, p.cols, y0 + r, x0 + c * G::V, v);
        }
    }
}

// Per tile j (stage s = j % stages; the fill of tile j + stages - 1 reuses
// the stage of tile j - 1): wait for tile j's group; barrier (every thread's
// copies have landed); read the block; then either store it (rows) or, after
// a barrier, write it back into stage s, barrier, store stage s row by row
// (staged); a barrier before the next fill may overwrite what others read.
template <class Op, bool Async>
__device__ __forceinline__ void asyncrt_tile_transpose_rows(const asyncrt_tile_params &p)
{
    typedef asyncrt_tile_geom<Op> G;
    constexpr int tile_bytes = G::H * 128, stages = Async ? Op::stages : 1;
    unsigned char *smem = asyncrt_tile_smem();
    const G g;
    const int mine = asyncrt_tile_count_mine(p.tiles);

    for (int j = 0; j < stages - 1; j++) asyncrt_tile_rows_fill<Op, Async>(p, smem + j * tile_bytes, j, mine);
    for (int j = 0; j < mine; j++) {
        const int ahead = j + stages - 1;
        asyncrt_tile_rows_fill<Op, Async>(p, smem + (ahead % stages) * tile_bytes, ahead, mine);
        if constexpr (Async) asyncrt_cp_async_wait_group<stages - 1>();
        __syncthreads(); // tile j has landed, every thread's part of it

        unsigned char *stage = smem + (j % stages) * tile_bytes;
        const int t = asyncrt_tile_index(j), y = g.y(p, t), x = g.x(p, t);
        uint4 in[G::V], out[G::V];
        asyncrt_tile_read_block<Op>(stage, g, in);
        asyncrt_tile_block<Op>(in, out, y, x, p.rows, p.cols);
        if (Op::variant == 2) {
            __syncthreads(); // every block is read: the stage takes the results
            asyncrt_tile_write_block<Op>(stage, g, out);
            __syncthreads();
            asyncrt_tile_rows_store<Op>(p, stage, t);
        } else {
            asyncrt_tile_block_store<Op>(p, out, y, x);
        }
        if (j + 1 < mine) __syncthreads(); // the same for the whole CTA: the stage may be refilled
    }
}
