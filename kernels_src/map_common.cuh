// asyncrt map op: pieces shared by the three paths (map_tma.cuh,
// map_ldgsts.cuh, map_plain.cuh).
//
// The runtime generates, per expression and dtypes, a struct Op with
//   pack             elements per pack: 16 bytes of the smallest element
//   inputs           number of input arrays
//   in_size[k]       bytes per element of input k
//   in_vecs[k]       16-byte vectors per pack of input k (pack*in_size[k]/16)
//   in_vec_total     sum of in_vecs
//   outputs, out_vecs[k], out_vec_total   the same for the outputs
//   threads, packs_per_thread, stages
//   store            an ASYNCRT_MAP_STORE_* mode (map_store.cuh)
//   chunked          each CTA takes one contiguous run of tiles (else tiles
//                    are dealt round-robin over the grid)
//   scalar(p, i)     element i, straight from global memory
//   compute_store(p, v, e, sink)  one pack whose inputs are the vectors v
//                    (input k at v + sum of in_vecs below k), handed to
//                    sink.put<k, vecs, T>(p.ptr[...], e, r) for element e
// and launches one of the path templates with asyncrt_map_params_t.
//
// Elements [head, head + packs*pack) are the body: there every array is
// 16-byte aligned, so it moves in 16-byte vectors (or bulk copies). The
// head and the ragged tail go element by element. When no head aligns all
// arrays at once the runtime passes head = n, packs = 0.
#pragma once

#include <asyncrt/device.cuh>
#include <asyncrt/map_store.cuh>

template <int Pointers, int Scalars>
struct asyncrt_map_params_t {
    unsigned long long n, head, packs;
    unsigned long long ptr[Pointers];    // inputs, then outputs
    unsigned long long scalar[Scalars];  // each value in the low bytes
};

// 16-bit float storage types; the expression computes on them as float.
struct asyncrt_f16 {
    unsigned short bits;
};
struct asyncrt_bf16 {
    unsigned short bits;
};

// Storage type -> the type the expression computes with, and back; and a
// scalar parameter from its 8-byte slot (the value sits in the low bytes).
template <typename T>
struct asyncrt_conv;
template <>
struct asyncrt_conv<float> {
    static __device__ __forceinline__ float in(float v) { return v; }
    static __device__ __forceinline__ float out(float v) { return v; }
    static __device__ __forceinline__ float bits(unsigned long long b) { return __uint_as_float(static_cast<unsigned>(b)); }
};
template <>
struct asyncrt_conv<double> {
    static __device__ __forceinline__ double in(double v) { return v; }
    static __device__ __forceinline__ double out(double v) { return v; }
    static __device__ __forceinline__ double bits(unsigned long long b) { return __longlong_as_double(static_cast<long long>(b)); }
};
template <>
struct asyncrt_conv<int> {
    static __device__ __forceinline__ int in(int v) { return v; }
    static __device__ __forceinline__ int out(int v) { return v; }
    static __device__ __forceinline__ int bits(unsigned long long b) { return static_cast<int>(static_cast<unsigned>(b)); }
};
template <>
struct asyncrt_conv<unsigned> {
    static __device__ __forceinline__ unsigned in(unsigned v) { return v; }
    static __device__ __forceinline__ unsigned out(unsigned v) { return v; }
    static __device__ __forceinline__ unsigned bits(unsigned long long b) { return static_cast<unsigned>(b); }
};
template <>
struct asyncrt_conv<asyncrt_f16> {
    static __device__ __forceinline__ float in(asyncrt_f16 v)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
        return f;
    }
    static __device__ __forceinline__ asyncrt_f16 out(float v)
    {
        asyncrt_f16 h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
        return h;
    }
    static __device__ __forceinline__ float bits(unsigned long long b)
    {
        return in(asyncrt_f16{static_cast<unsigned short>(b)});
    }
};
template <>
struct asyncrt_conv<asyncrt_bf16> {
    static __device__ __forceinline__ float in(asyncrt_bf16 v)
    {
        return __uint_as_float(static_cast<unsigned>(v.bits) << 16);
    }
    // Round to nearest even by hand: cvt.rn.bf16.f32 needs sm_80, and the
    // plain path runs below it.
    static __device__ __forceinline__ asyncrt_bf16 out(float v)
    {
        const unsigned u = __float_as_uint(v);
        if ((u & 0x7fffffffu) > 0x7f800000u) // NaN stays a (quiet) NaN
            return asyncrt_bf16{static_cast<unsigned short>((u >> 16) | 0x40u)};
        return asyncrt_bf16{static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
    }
    static __device__ __forceinline__ float bits(unsigned long long b)
    {
        return in(asyncrt_bf16{static_cast<unsigned short>(b)});
    }
};

// Element q of a pack held in 16-byte vectors.
template <typename T>
__device__ __forceinline__ auto asyncrt_map_get(const uint4 *v, int q)
{
    return asyncrt_conv<T>::in(reinterpret_cast<const T *>(v)[q]);
}
template <typename T, typename C>
__device__ __forceinline__ void asyncrt_map_put(uint4 *v, int q, C value)
{
    reinterpret_cast<T *>(v)[q] = asyncrt_conv<T>::out(value);
}

__device__ __forceinline__ uint4 asyncrt_map_load_nc(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// Streaming store: the result is not read again by this kernel.
__device__ __forceinline__ void asyncrt_map_store_cs(void *p, uint4 v)
{
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

__device__ __forceinline__ void asyncrt_map_store_wb(void *p, uint4 v)
{
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

// Stores a pack's output k straight to global memory (modes CS and WB).
template <int Store>
struct asyncrt_map_global_sink {
    template <int K, int Vecs, typename T>
    __device__ __forceinline__ void put(unsigned long long base, unsigned long long e, const uint4 *v) const
    {
        uint4 *dst = reinterpret_cast<uint4 *>(reinterpret_cast<T *>(base) + e);
#pragma unroll
        for (int c = 0; c < Vecs; c++) {
            if (Store == ASYNCRT_MAP_STORE_WB) asyncrt_map_store_wb(dst + c, v[c]);
            else asyncrt_map_store_cs(dst + c, v[c]);
        }
    }
};

// The head and the tail, element by element, over the whole grid.
template <class Op, class P>
__device__ __forceinline__ void asyncrt_map_edges(const P &p)
{
    const unsigned long long body = p.packs * Op::pack;
    const unsigned long long count = p.n - body;
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long k = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
         k < count; k += stride)
        Op::scalar(p, k < p.head ? k : k + body);
}

// Byte offset of input k's region within a stage of `tile` packs, and of
// its vectors within a pack.
template <class Op>
__device__ __forceinline__ constexpr int asyncrt_map_vec_offset(int k)
{
    int o = 0;
    for (int i = 0; i < k; i++) o += Op::in_vecs[i];
    return o;
}

template <class Op>
__device__ __forceinline__ constexpr int asyncrt_map_out_offset(int k)
{
    int o = 0;
    for (int i = 0; i < k; i++) o += Op::out_vecs[i];
    return o;
}

// Tiles of the body: tile t holds packs [t*tile, t*tile + tile). CTA b
// takes tiles b, b + grid, b + 2*grid ..., or with Op::chunked the run
// [b*tiles/grid, (b+1)*tiles/grid).
template <class Op>
struct asyncrt_map_tiles {
    static constexpr unsigned tile = Op::threads * Op::packs_per_thread; // packs per tile
    static constexpr unsigned in_bytes = tile * Op::in_vec_total * 16;    // a stage's inputs
    static constexpr unsigned stage_bytes = in_bytes + (Op::store == ASYNCRT_MAP_STORE_BULK ? tile * Op::out_vec_total * 16 : 0);

    unsigned long long start, step, mine; // mine: how many tiles this CTA processes

    __device__ __forceinline__ explicit asyncrt_map_tiles(unsigned long long packs)
    {
        const unsigned long long tiles = (packs + tile - 1) / tile;
        if (Op::chunked) {
            start = tiles * blockIdx.x / gridDim.x;
            mine = tiles * (blockIdx.x + 1) / gridDim.x - start;
            step = 1;
        } else {
            start = blockIdx.x;
            mine = tiles > blockIdx.x ? (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
            step = gridDim.x;
        }
    }
    // First pack of this CTA's i-th tile, and how many packs it holds.
    __device__ __forceinline__ unsigned long long first(unsigned long long i) const
    {
        return (start + i * step) * tile;
    }
    static __device__ __forceinline__ unsigned count(unsigned long long packs, unsigned long long first_pack)
    {
        const unsigned long long left = packs - first_pack;
        return left < tile ? static_cast<unsigned>(left) : tile;
    }
};

// Pack j of a staged tile: input k's packs lie contiguous in its own region.
template <class Op>
__device__ __forceinline__ void asyncrt_map_load_stage(const unsigned char *stage, unsigned j, uint4 *v)
{
    constexpr unsigned tile = asyncrt_map_tiles<Op>::tile;
#pragma unroll
    for (int k = 0; k < Op::inputs; k++) {
        const uint4 *region = reinterpret_cast<const uint4 *>(stage) + tile * asyncrt_map_vec_offset<Op>(k);
#pragma unroll
        for (int c = 0; c < Op::in_vecs[k]; c++)
            v[asyncrt_map_vec_offset<Op>(k) + c] = region[j * Op::in_vecs[k] + c];
    }
}
