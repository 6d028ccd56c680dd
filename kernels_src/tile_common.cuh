// asyncrt tile ops: pieces shared by the transpose/2D-map templates
// (tile_transpose*.cuh) and the stencil templates (tile_stencil*.cuh).
//
// Matrices are row-major, rows x cols, of a 2- or 4-byte type T. A 16-byte
// vector holds V = 16 / sizeof(T) elements of one row. "vec_in" (vec_out)
// says that every row of the input (output) starts on a 16-byte boundary, so
// it moves in whole vectors; otherwise the edges of the work go element by
// element. Everything here is a template, so that including this file on any
// arch compiles, and the sm_80/sm_90 wrappers are only checked where used.
#pragma once

#include <asyncrt/map_common.cuh>

// The one kernel parameter of every tile kernel. op_tile.c mirrors this
// layout byte for byte: change both together.
struct asyncrt_tile_params {
    asyncrt_tensor_map in_map, out_map; // TMA path only
    unsigned long long in, out;         // device pointers
    int rows, cols;                     // the input's shape
    int tiles_x, tiles;                 // tiles per row of tiles, and in all
    int vec_in, vec_out;
    float w[81];                        // stencil weights, (2r+1) x (2r+1), row-major
};
static_assert(sizeof(asyncrt_tile_params) == 640, "asyncrt_tile_params must match op_tile.c");

// Storage type <-> its raw bits in the low bytes of an unsigned.
template <typename T>
struct asyncrt_tile_bits;
template <>
struct asyncrt_tile_bits<float> {
    static __device__ __forceinline__ float from(unsigned b) { return __uint_as_float(b); }
    static __device__ __forceinline__ unsigned to(float v) { return __float_as_uint(v); }
};
template <>
struct asyncrt_tile_bits<int> {
    static __device__ __forceinline__ int from(unsigned b) { return static_cast<int>(b); }
    static __device__ __forceinline__ unsigned to(int v) { return static_cast<unsigned>(v); }
};
template <>
struct asyncrt_tile_bits<unsigned> {
    static __device__ __forceinline__ unsigned from(unsigned b) { return b; }
    static __device__ __forceinline__ unsigned to(unsigned v) { return v; }
};
template <>
struct asyncrt_tile_bits<asyncrt_f16> {
    static __device__ __forceinline__ asyncrt_f16 from(unsigned b) { return asyncrt_f16{static_cast<unsigned short>(b)}; }
    static __device__ __forceinline__ unsigned to(asyncrt_f16 v) { return v.bits; }
};
template <>
struct asyncrt_tile_bits<asyncrt_bf16> {
    static __device__ __forceinline__ asyncrt_bf16 from(unsigned b) { return asyncrt_bf16{static_cast<unsigned short>(b)}; }
    static __device__ __forceinline__ unsigned to(asyncrt_bf16 v) { return v.bits; }
};

// Word k of a vector; k is a constant once loops are unrolled, so this stays
// in registers.
__device__ __forceinline__ unsigned asyncrt_tile_word(const uint4 &v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

// Bits of element j of a vector of E-byte elements.
template <int E>
__device__ __forceinline__ unsigned asyncrt_tile_elem(const uint4 &v, int j)
{
    if (E == 4) return asyncrt_tile_word(v, j);
    return (asyncrt_tile_word(v, j >> 1) >> ((j & 1) * 16)) & 0xffffu;
}

// A vector from the bits of its V = 16 / E elements.
template <int E>
__device__ __forceinline__ uint4 asyncrt_tile_pack(const unsigned *b)
{
    if (E == 4) return make_uint4(b[0], b[1], b[2], b[3]);
    return make_uint4(b[0] | (b[1] << 16), b[2] | (b[3] << 16), b[4] | (b[5] << 16), b[6] | (b[7] << 16));
}

// Bits of one element of a global array (E bytes each).
template <int E>
__device__ __forceinline__ unsigned asyncrt_tile_load_elem(unsigned long long base, unsigned long long i)
{
    if (E == 4) return __ldg(reinterpret_cast<const unsigned *>(base) + i);
    return __ldg(reinterpret_cast<const unsigned short *>(base) + i);
}
template <int E>
__device__ __forceinline__ void asyncrt_tile_store_elem(unsigned long long base, unsigned long long i, unsigned b)
{
    if (E == 4) reinterpret_cast<unsigned *>(base)[i] = b;
    else reinterpret_cast<unsigned short *>(base)[i] = static_cast<unsigned short>(b);
}

// 16 bytes from global memory, into registers (ld.global.nc) or into shared
// memory (cp.async.cg), with an L2 prefetch hint of L2 bytes (the tuning
// knob l2=: 0 none; 128 or 256: the L2 fetches the whole aligned block the
// access lies in, so a tile's neighbour in the same DRAM page comes along).
// The 256-byte hint needs sm_80; below that it is 128.
template <int L2>
__device__ __forceinline__ uint4 asyncrt_tile_ld16(const void *g)
{
    static_assert(L2 == 0 || L2 == 128 || L2 == 256, "asyncrt tile ops: l2 is 0, 128 or 256");
    if constexpr (L2 == 0) {
        return asyncrt_map_load_nc(g);
    } else {
        uint4 v;
#if __CUDA_ARCH__ >= 800
        if constexpr (L2 == 256)
            asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                         : "l"(g));
        else
#endif
            asm volatile("ld.global.nc.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                         : "l"(g));
        return v;
    }
}
template <int L2>
__device__ __forceinline__ void asyncrt_tile_cp16(void *smem, const void *g)
{
    if constexpr (L2 == 0) asyncrt_cp_async_cg(smem, g);
    else if constexpr (L2 == 128)
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(asyncrt_smem_addr(smem)), "l"(g)
                     : "memory");
    else
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(asyncrt_smem_addr(smem)), "l"(g)
                     : "memory");
}

// Elements [x, x + V) of input row y, zero outside the matrix (y and x may
// be negative).
template <int E, int L2 = 0>
__device__ __forceinline__ uint4 asyncrt_tile_load_vec(const asyncrt_tile_params &p, int y, int x)
{
    constexpr int V = 16 / E;
    if (y < 0 || y >= p.rows) return make_uint4(0, 0, 0, 0);
    const unsigned long long row = static_cast<unsigned long long>(y) * static_cast<unsigned>(p.cols);
    if (p.vec_in) { // rows hold whole vectors and x is a multiple of V: all in or all out
        if (x < 0 || x >= p.cols) return make_uint4(0, 0, 0, 0);
        return asyncrt_tile_ld16<L2>(reinterpret_cast<const unsigned char *>(p.in) + (row + x) * E);
    }
    unsigned b[V];
#pragma unroll
    for (int e = 0; e < V; e++)
        b[e] = x + e >= 0 && x + e < p.cols ? asyncrt_tile_load_elem<E>(p.in, row + x + e) : 0u;
    return asyncrt_tile_pack<E>(b);
}

// The same into shared memory: with Async, a 16-byte cp.async where the
// vector lies inside the matrix; zeros and unaligned rows are stored by the
// thread itself (visible to it at once, to others after a barrier).
template <int E, bool Async, int L2 = 0>
__device__ __forceinline__ void asyncrt_tile_fill_vec(void *smem, const asyncrt_tile_params &p, int y, int x)
{
    if constexpr (Async) {
        if (p.vec_in && y >= 0 && y < p.rows && x >= 0 && x < p.cols) {
            const unsigned long long row = static_cast<unsigned long long>(y) * static_cast<unsigned>(p.cols);
            asyncrt_tile_cp16<L2>(smem, reinterpret_cast<const unsigned char *>(p.in) + (row + x) * E);
            return;
        }
    }
    *reinterpret_cast<uint4 *>(smem) = asyncrt_tile_load_vec<E, L2>(p, y, x);
}

// Elements [x, x + V) of row y of the output (out_rows x out_cols), clipped.
template <int E>
__device__ __forceinline__ void asyncrt_tile_store_vec(const asyncrt_tile_params &p, int out_rows, int out_cols,
                                                       int y, int x, const uint4 &v)
{
    constexpr int V = 16 / E;
    if (y >= out_rows) return;
    const unsigned long long row = static_cast<unsigned long long>(y) * static_cast<unsigned>(out_cols);
    if (p.vec_out) {
        if (x < out_cols) asyncrt_map_store_cs(reinterpret_cast<unsigned char *>(p.out) + (row + x) * E, v);
        return;
    }
#pragma unroll
    for (int e = 0; e < V; e++)
        if (x + e < out_cols) asyncrt_tile_store_elem<E>(p.out, row + x + e, asyncrt_tile_elem<E>(v, e));
}

// Tiles are dealt round-robin: CTA b takes tiles b, b + grid, ...
__device__ __forceinline__ int asyncrt_tile_count_mine(int tiles)
{
    const int b = static_cast<int>(blockIdx.x), g = static_cast<int>(gridDim.x);
    return tiles > b ? (tiles - b + g - 1) / g : 0;
}
__device__ __forceinline__ int asyncrt_tile_index(int j)
{
    return static_cast<int>(blockIdx.x) + j * static_cast<int>(gridDim.x);
}

// The dynamic shared memory, its base rounded up to 1024 bytes (what the
// 128-byte swizzle's pattern repeats on; the runtime asks for 1 KiB more).
__device__ __forceinline__ unsigned char *asyncrt_tile_smem()
{
    extern __shared__ __align__(16) unsigned char asyncrt_tile_dyn[];
    const unsigned pad = (1024u - (asyncrt_smem_addr(asyncrt_tile_dyn) & 1023u)) & 1023u;
    return asyncrt_tile_dyn + pad;
}
