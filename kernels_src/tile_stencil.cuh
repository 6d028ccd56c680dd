// asyncrt 2D stencil: out[y][x] = sum over |dy|, |dx| <= R of
// w[dy+R][dx+R] * in[y+dy][x+dx], or a user expression over in(dy, dx),
// with zeros outside the matrix. The compute every path shares, and the
// staged LDGSTS and plain paths (the TMA path is tile_stencil_tma.cuh).
//
// The runtime generates a struct Op with
//   T, C                 storage type (2 or 4 bytes), compute type
//   threads, stages, radius (R), weights (bool), box_w (see the TMA path)
//   opt, tw              output rows per thread (OPT), tile width (TW)
//   l2                   L2 prefetch hint of the loads (tile_common.cuh)
//   eval(in, y, x, rows, cols)   the expression (when weights is false)
//
// Geometry. A tile is TW columns x TH rows of the output; thread t owns
// column t % TW and OPT consecutive rows of it (TH = OPT * threads / TW; by
// default TW = 128, OPT = 16 and 256 threads, TH = 32). The staged input
// is (TH + 2R) x (TW + 2V): the halo costs 2R/TH + 2V/TW more reads (from
// L2, as neighbouring tiles read the same rows): 13% at TH = 32, TW = 128,
// R = 1, f32; 10% at TH = 64 (ASYNCRT_TILE_TUNE=opt=32 or threads=512); 6%
// at TH = 64, TW = 256 (tw=256,threads=512,opt=32: staged rows of 1 KiB,
// off the TMA path, whose boxes are at most 256 wide). These are the
// levers the tuning sweep measures. Its inputs are staged with a halo of R rows above
// and below; a thread walks the OPT + 2R input rows of its column once, reading
// 2R + 1 values per row and adding them to every output they touch, so each
// output sums its terms in row-major (dy, dx) order with fmaf: the CPU
// reference can match that bit for bit.
#pragma once

#include <asyncrt/tile_common.cuh>

template <class Op>
struct asyncrt_stencil_geom {
    typedef typename Op::T T;
    static constexpr int E = sizeof(T), V = 16 / E, R = Op::radius, TW = Op::tw, OPT = Op::opt;
    static constexpr int TH = OPT * (Op::threads / TW), BH = TH + 2 * R; // rows staged per tile
    static_assert(E == 2 || E == 4, "asyncrt stencils move 2- or 4-byte elements");
    static_assert(R >= 1 && R <= 4 && R <= V, "asyncrt stencils: radius 1..4");
    static_assert((TW == 128 || TW == 256) && Op::threads % TW == 0 && Op::threads <= 512,
                  "asyncrt stencils: tw 128 or 256, threads a multiple of it up to 512");
    static_assert(OPT == 8 || OPT == 16 || OPT == 32, "asyncrt stencils: opt must be 8, 16 or 32");

    static __device__ __forceinline__ int y0(const asyncrt_tile_params &p, int t) { return (t / p.tiles_x) * TH; }
    static __device__ __forceinline__ int x0(const asyncrt_tile_params &p, int t) { return (t % p.tiles_x) * TW; }
    static __device__ __forceinline__ int col() { return static_cast<int>(threadIdx.x) % TW; }
    static __device__ __forceinline__ int row() { return static_cast<int>(threadIdx.x) / TW * OPT; } // first output row
};

// in(dy, dx) in an expression: the staged element dy rows and dx columns
// from the output's position.
template <typename T>
struct asyncrt_stencil_in {
    const T *center;
    int pitch; // elements per staged row
    __device__ __forceinline__ auto operator()(int dy, int dx) const
    {
        return asyncrt_conv<T>::in(center[dy * pitch + dx]);
    }
};

// Outputs o = 0..OPT-1 of this thread, rows y + o of column x. `stage` is the
// staged tile, its row 0 being input row y0 - R; `col` is this thread's
// column in it.
template <class Op>
__device__ __forceinline__ void asyncrt_stencil_compute(const asyncrt_tile_params &p, const unsigned char *stage,
                                                        int pitch, int col, int y, int x, typename Op::C *acc)
{
    typedef asyncrt_stencil_geom<Op> G;
    typedef typename Op::T T;
    const T *base = reinterpret_cast<const T *>(stage) + G::row() * pitch + col;
    if constexpr (Op::weights) {
#pragma unroll
        for (int o = 0; o < G::OPT; o++) acc[o] = 0.0f;
#pragma unroll
        for (int m = 0; m < G::OPT + 2 * G::R; m++) { // staged row row() + m
            float v[2 * G::R + 1];
#pragma unroll
            for (int d = 0; d <= 2 * G::R; d++) v[d] = asyncrt_conv<T>::in(base[m * pitch + d - G::R]);
#pragma unroll
            for (int o = 0; o < G::OPT; o++) {
                const int dy = m - o; // 0..2R: this row is output o's row dy - R
                if (dy >= 0 && dy <= 2 * G::R)
#pragma unroll
                    for (int d = 0; d <= 2 * G::R; d++) acc[o] = fmaf(p.w[dy * (2 * G::R + 1) + d], v[d], acc[o]);
            }
        }
    } else {
#pragma unroll
        for (int o = 0; o < G::OPT; o++)
            acc[o] = Op::eval(asyncrt_stencil_in<T>{base + (o + G::R) * pitch, pitch}, y + o, x, p.rows, p.cols);
    }
}

// LDGSTS (Async) and plain paths. A stage holds BH rows of TW + 2V columns,
// column 0 being input column x0 - V, so that every staged vector starts on a
// vector boundary of the matrix. With Async, vectors inside the matrix come
// by 16-byte cp.async in a pipeline of `stages` groups; zeros (and rows that
// are not 16-byte aligned) are stored directly. Threads stage vectors others
// read, so a barrier follows the wait, and another one precedes the refill.
template <class Op, bool Async>
__device__ __forceinline__ void asyncrt_stencil_fill(const asyncrt_tile_params &p, unsigned char *stage, int j,
                                                     int mine)
{
    typedef asyncrt_stencil_geom<Op> G;
    constexpr int per_row = G::TW / G::V + 2, pitch = G::TW + 2 * G::V;
    if (j < mine) {
        const int t = asyncrt_tile_index(j), y0 = G::y0(p, t) - G::R, x0 = G::x0(p, t) - G::V;
        for (int c = static_cast<int>(threadIdx.x); c < G::BH * per_row; c += Op::threads) {
            const int r = c / per_row, v = c % per_row;
            asyncrt_tile_fill_vec<G::E, Async, Op::l2>(stage + (r * pitch + v * G::V) * G::E, p, y0 + r,
                                                       x0 + v * G::V);
        }
    }
    if constexpr (Async) asyncrt_cp_async_commit_group();
}

template <class Op, bool Async>
__device__ __forceinline__ void asyncrt_stencil_staged(const asyncrt_tile_params &p)
{
    typedef asyncrt_stencil_geom<Op> G;
    constexpr int pitch = G::TW + 2 * G::V, stage_bytes = (G::BH * pitch * G::E + 127) / 128 * 128;
    constexpr int stages = Async ? Op::stages : 1;
    unsigned char *smem = asyncrt_tile_smem();
    const int mine = asyncrt_tile_count_mine(p.tiles);

    for (int j = 0; j < stages - 1; j++) asyncrt_stencil_fill<Op, Async>(p, smem + j * stage_bytes, j, mine);
    for (int j = 0; j < mine; j++) {
        const int ahead = j + stages - 1; // refills the stage tile j - 1 used
        asyncrt_stencil_fill<Op, Async>(p, smem + (ahead % stages) * stage_bytes, ahead, mine);
        if constexpr (Async) asyncrt_cp_async_wait_group<stages - 1>();
        __syncthreads(); // tile j is staged, by every thread

        const int t = asyncrt_tile_index(j);
        const int y = G::y0(p, t) + G::row(), x = G::x0(p, t) + G::col();
        typename Op::C acc[G::OPT];
        asyncrt_stencil_compute<Op>(p, smem + (j % stages) * stage_bytes, pitch, G::V + G::col(), y, x, acc);
        if (x < p.cols) {
            const unsigned long long at = static_cast<unsigned long long>(y) * static_cast<unsigned>(p.cols) + x;
#pragma unroll
            for (int o = 0; o < G::OPT; o++)
                if (y + o < p.rows)
                    reinterpret_cast<typename Op::T *>(p.out)[at + static_cast<unsigned long long>(o) * p.cols] =
                        asyncrt_conv<typename Op::T>::out(acc[o]);
        }
        __syncthreads(); // every thread is done with the stage the next iteration refills
    }
}
