// asyncrt-probe's kernels: each proves one asynchronous data-movement feature
// on tiny random data that the host checks element by element.
//
// A feature is compiled alone (-DASYNCRT_PROBE_<FEATURE>) so that the arch
// matrix can say which arch accepts which feature. Everything is inline PTX:
// the probe must not depend on any other device library.

typedef unsigned int u32;
typedef unsigned long long u64;

// A CUtensorMap as a kernel sees it: 128 opaque bytes, 64-byte aligned.
struct __align__(64) probe_tensor_map {
    u64 opaque[16];
};

__device__ __forceinline__ u32 probe_smem(const void *p)
{
    return (u32)__cvta_generic_to_shared(p);
}

// ---- sm_80: mbarrier ------------------------------------------------------

__device__ __forceinline__ void mbar_init(u32 bar, u32 count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar)
{
    asm volatile("{ .reg .b64 state; mbarrier.arrive.shared.b64 state, [%0]; }" ::"r"(bar) : "memory");
}

// Waits for the phase of `parity` to complete. A probe that never completes
// traps after a few seconds rather than hanging the tool.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity)
{
    for (u32 spins = 0;; spins++) {
        u32 done;
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
        if (done) return;
        if (spins > (1u << 26)) __trap();
    }
}

__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(probe_smem(smem)), "l"(gmem) : "memory");
}

// ---- sm_90: transaction counts, bulk copies, clusters ----------------------

__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes)
{
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Makes an mbarrier's initialisation visible to the async proxy and the cluster.
__device__ __forceinline__ void fence_barrier_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later
// async-proxy (bulk copy) reads of them.
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void bulk_load(void *smem, const void *gmem, u32 bytes, u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     probe_smem(smem)),
                 "l"(gmem), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void bulk_store(void *gmem, const void *smem, u32 bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(probe_smem(smem)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__device__ __forceinline__ u32 cluster_ctarank()
{
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ u32 cluster_id_x()
{
    u32 r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return r;
}

// Every thread of every CTA of the cluster; orders shared memory across it.
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// ---- feature probes --------------------------------------------------------
// Blocks are 128 threads unless said otherwise.

#if defined(ASYNCRT_PROBE_LDGSTS)
// 16-byte (.cg) and 4-byte (.ca) cp.async into shared memory; the block then
// writes its neighbour's copy, so the data must have gone through shared memory.
extern "C" __global__ void __launch_bounds__(128)
probe_ldgsts(const uint4 *in16, const u32 *in4, uint4 *out16, u32 *out4)
{
    __shared__ __align__(16) uint4 s16[128];
    __shared__ __align__(16) u32 s4[128];
    u32 t = threadIdx.x, base = blockIdx.x * 128;
    cp_async_16(&s16[t], in16 + base + t);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(probe_smem(&s4[t])), "l"(in4 + base + t)
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    out16[base + t] = s16[(t + 1) % 128];
    out4[base + t] = s4[(t + 1) % 128];
}
#endif

#if defined(ASYNCRT_PROBE_MBARRIER)
// Two phases of one mbarrier: every thread stores its element to shared
// memory and arrives; all wait on the phase's parity before reading another
// thread's element. (cp.async completing on an mbarrier works too, but
// compute-sanitizer's synccheck reports every cp.async.mbarrier.arrive as a
// "Missing wait", so the probe keeps to what the sanitizer can judge.)
extern "C" __global__ void __launch_bounds__(128) probe_mbarrier(const uint4 *in, uint4 *out)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(16) uint4 buf[2][128];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    if (t == 0) mbar_init(b, 128);
    __syncthreads();
    for (u32 phase = 0; phase < 2; phase++) {
        u32 base = (blockIdx.x * 2 + phase) * 128;
        buf[phase][t] = in[base + t];
        mbar_arrive(b);
        mbar_wait(b, phase & 1);
        out[base + t] = buf[phase][(t + 5) % 128];
    }
}
#endif

#if defined(ASYNCRT_PROBE_MBARRIER_TX)
// One phase that needs an arrival and 4 KiB of transactions from four bulk
// copies: expect_tx and arrive.expect_tx each announce half of the bytes.
// The block writes the buffer out reversed.
extern "C" __global__ void __launch_bounds__(128) probe_mbarrier_tx(const u32 *in, u32 *out)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(128) u32 buf[1024];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    const u32 *src = in + blockIdx.x * 1024;
    if (t == 0) {
        mbar_init(b, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (t == 0) {
        mbar_expect_tx(b, 2048);
        for (u32 c = 0; c < 4; c++) bulk_load(buf + c * 256, src + c * 256, 1024, b);
        mbar_arrive_expect_tx(b, 2048);
    }
    mbar_wait(b, 0);
    for (u32 i = t; i < 1024; i += 128) out[blockIdx.x * 1024 + i] = buf[1023 - i];
}
#endif

#if defined(ASYNCRT_PROBE_BULK_COPY)
// Global -> shared with cp.async.bulk, a generic-proxy XOR in shared memory,
// then shared -> global with a bulk_group store.
extern "C" __global__ void __launch_bounds__(128) probe_bulk_copy(const u32 *in, u32 *out, u32 key)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(128) u32 src[1024];
    __shared__ __align__(128) u32 dst[1024];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    if (t == 0) {
        mbar_init(b, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (t == 0) {
        mbar_arrive_expect_tx(b, sizeof src);
        bulk_load(src, in + blockIdx.x * 1024, sizeof src, b);
    }
    mbar_wait(b, 0);
    for (u32 i = t; i < 1024; i += 128) dst[i] = src[i] ^ key;
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        bulk_store(out + blockIdx.x * 1024, dst, sizeof dst);
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
#endif

#if defined(ASYNCRT_PROBE_TMA_TILE)
// Each CTA loads one 16x8 tile of a row-major u32 matrix `width` wide through
// a 2D tiled tensor map and stores it back in place with ordinary stores.
extern "C" __global__ void __launch_bounds__(128)
probe_tma_tile(const __grid_constant__ probe_tensor_map map, u32 *out, u32 width)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(128) u32 tile[8][16];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    int x = blockIdx.x * 16, y = blockIdx.y * 8;
    if (t == 0) {
        mbar_init(b, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (t == 0) {
        mbar_arrive_expect_tx(b, sizeof tile);
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];" ::"r"(probe_smem(tile)),
                     "l"((u64)&map), "r"(x), "r"(y), "r"(b)
                     : "memory");
    }
    mbar_wait(b, 0);
    u32 r = t / 16, c = t % 16;
    out[(y + r) * width + x + c] = tile[r][c];
}
#endif

#if defined(ASYNCRT_PROBE_TMA_IM2COL)
// One im2col load of 32 pixels x 4 u32 channels from an NHWC tensor, starting
// at (c, w, h, n) = 0 with the filter offset (w, h) = (1, 1); the block writes
// the 128 words out as they landed.
extern "C" __global__ void __launch_bounds__(128)
probe_tma_im2col(const __grid_constant__ probe_tensor_map map, u32 *out)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(128) u32 buf[32 * 4];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    if (t == 0) {
        mbar_init(b, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (t == 0) {
        unsigned short off_w = 1, off_h = 1;
        mbar_arrive_expect_tx(b, sizeof buf);
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};" ::"r"(probe_smem(buf)),
                     "l"((u64)&map), "r"(0), "r"(0), "r"(0), "r"(0), "r"(b), "h"(off_w), "h"(off_h)
                     : "memory");
    }
    mbar_wait(b, 0);
    out[t] = buf[t];
}
#endif

#if defined(ASYNCRT_PROBE_CLUSTERS)
// Launched with clusters of 2 CTAs: each CTA reports its rank, the cluster's
// size and the cluster's id, XORed with a random salt, after a cluster barrier.
extern "C" __global__ void __launch_bounds__(128) probe_clusters(u32 *out, u32 salt)
{
    u32 size;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
    u32 rank = cluster_ctarank(), id = cluster_id_x();
    cluster_sync();
    if (threadIdx.x == 0) out[blockIdx.x] = salt ^ (rank | size << 8 | id << 16);
}
#endif

#if defined(ASYNCRT_PROBE_MULTICAST)
// Clusters of 2: each CTA multicasts one half of its cluster's 4 KiB into
// both CTAs, so every CTA must receive the whole block, half from its peer.
extern "C" __global__ void __launch_bounds__(128) probe_multicast(const u32 *in, u32 *out)
{
    __shared__ __align__(8) u64 bar;
    __shared__ __align__(128) u32 buf[1024];
    u32 t = threadIdx.x, b = probe_smem(&bar);
    u32 rank = cluster_ctarank(), id = cluster_id_x();
    if (t == 0) {
        mbar_init(b, 1);
        fence_barrier_init();
    }
    cluster_sync(); // both barriers exist before either CTA's copy lands
    if (t == 0) {
        unsigned short mask = 0x3;
        u32 half = rank * 512;
        mbar_arrive_expect_tx(b, sizeof buf);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                     " [%0], [%1], %2, [%3], %4;" ::"r"(probe_smem(buf + half)),
                     "l"(in + id * 1024 + half), "r"(2048u), "r"(b), "h"(mask)
                     : "memory");
    }
    mbar_wait(b, 0);
    for (u32 i = t; i < 1024; i += 128) out[blockIdx.x * 1024 + i] = buf[i];
    cluster_sync(); // no CTA leaves while its peer may still write into it
}
#endif

#if defined(ASYNCRT_PROBE_DSMEM)
// Clusters of 2: each CTA fills its shared memory, then reads its peer's
// through mapa + ld.shared::cluster.
extern "C" __global__ void __launch_bounds__(128) probe_dsmem(const u32 *in, u32 *out)
{
    __shared__ u32 buf[128];
    u32 t = threadIdx.x, rank = cluster_ctarank();
    buf[t] = in[blockIdx.x * 128 + t];
    cluster_sync();
    u32 remote, v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(probe_smem(&buf[(t + 1) % 128])), "r"(rank ^ 1));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
    out[blockIdx.x * 128 + t] = v;
    cluster_sync(); // the peer's shared memory must outlive our reads
}
#endif

#if defined(ASYNCRT_PROBE_SM90A)
// Compiled for sm_90a only: one warpgroup computes D (64x8, f32) = A (64x16)
// x B (16x8) with wgmma.mma_async, f16 operands read from shared memory in the
// no-swizzle K-major layout of 8x8 core matrices (128 contiguous bytes each);
// every element of D is checked on the host. Entries are small integers, so
// the products are exact.
__device__ __forceinline__ u64 wgmma_desc(const void *smem, u32 lbo, u32 sbo)
{
    // start address, leading (K) and stride (M/N) byte offsets, all >> 4;
    // base offset 0 and swizzle mode 0 (none).
    return (u64)((probe_smem(smem) & 0x3FFFF) >> 4) | (u64)((lbo & 0x3FFFF) >> 4) << 16 |
           (u64)((sbo & 0x3FFFF) >> 4) << 32;
}

__device__ __forceinline__ unsigned short small_int_f16(u32 word)
{
    const unsigned short bits[7] = {0xC200, 0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000, 0x4200}; // -3..3
    return bits[word % 7];
}

extern "C" __global__ void __launch_bounds__(128) probe_sm90a(const u32 *in, u32 *out)
{
    // A(m, k) at core (m/8, k/8), i.e. byte ((m/8)*2 + k/8)*128, row m%8, half k%8:
    // the next core along K is 128 bytes on (LBO), along M 256 bytes (SBO).
    // B is stored transposed (K-major): B(k, n) at core k/8, row n, half k%8.
    __shared__ __align__(128) unsigned short a[64 * 16];
    __shared__ __align__(128) unsigned short b[16 * 8];
    const u32 t = threadIdx.x;
    const u32 *src = in + blockIdx.x * 1152;
    for (u32 i = t; i < 64 * 16; i += 128) {
        u32 m = i / 16, k = i % 16;
        a[((m / 8) * 2 + k / 8) * 64 + (m % 8) * 8 + k % 8] = small_int_f16(src[i]);
    }
    for (u32 i = t; i < 8 * 16; i += 128) {
        u32 n = i / 16, k = i % 16;
        b[(k / 8) * 64 + n * 8 + k % 8] = small_int_f16(src[1024 + i]);
    }
    // wgmma reads shared memory through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    u64 da = wgmma_desc(a, 128, 256), db = wgmma_desc(b, 128, 256);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("{\n.reg .pred zero_d;\nsetp.ne.b32 zero_d, 0, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, zero_d, 1, 1, 0, 0;\n}"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "l"(da), "l"(db)
                 : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)::"memory");
    // Accumulators: warp w holds rows 16w..16w+15; lane l has row 16w + l/4
    // (d0, d1) and that row + 8 (d2, d3), at columns 2(l%4) and 2(l%4) + 1.
    u32 w = t / 32, l = t % 32, row = 16 * w + l / 4, col = 2 * (l % 4);
    u32 *dst = out + blockIdx.x * 512;
    dst[row * 8 + col] = __float_as_uint(d0);
    dst[row * 8 + col + 1] = __float_as_uint(d1);
    dst[(row + 8) * 8 + col] = __float_as_uint(d2);
    dst[(row + 8) * 8 + col + 1] = __float_as_uint(d3);
}
#endif

#if defined(ASYNCRT_PROBE_SM100A)
// Compiled for sm_100a only: one warp allocates 32 columns of tensor memory,
// stores a word per lane there, reads it back and frees it.
extern "C" __global__ void __launch_bounds__(32) probe_sm100a(const u32 *in, u32 *out)
{
    __shared__ u32 taddr_slot;
    u32 t = threadIdx.x;
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" ::"r"(probe_smem(&taddr_slot))
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    u32 taddr = taddr_slot, v = in[blockIdx.x * 32 + t], r;
    asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(v) : "memory");
    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r) : "r"(taddr) : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    out[blockIdx.x * 32 + t] = r;
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" ::"r"(taddr) : "memory");
}
#endif

// ---- bandwidth kernels (--bench) -------------------------------------------

#if defined(ASYNCRT_PROBE_BENCH_PLAIN)
extern "C" __global__ void __launch_bounds__(256) probe_bench_plain(const uint4 *in, uint4 *out, u64 n)
{
    for (u64 i = blockIdx.x * 256ull + threadIdx.x; i < n; i += (u64)gridDim.x * 256) out[i] = in[i];
}
#endif

#if defined(ASYNCRT_PROBE_BENCH_LDGSTS)
// Tiles of 256 threads x 4 x 16 bytes, double-buffered: the next tile's
// cp.async is in flight while this one is stored. Each thread reads back only
// what it copied itself, so its own wait_group suffices.
extern "C" __global__ void __launch_bounds__(256) probe_bench_ldgsts(const uint4 *in, uint4 *out, u64 tiles)
{
    __shared__ __align__(16) uint4 stage[2][4][256];
    u32 t = threadIdx.x, s = 0;
    u64 tile = blockIdx.x;
    if (tile < tiles)
        for (u32 k = 0; k < 4; k++) cp_async_16(&stage[0][k][t], in + tile * 1024 + k * 256 + t);
    asm volatile("cp.async.commit_group;" ::: "memory");
    for (; tile < tiles; tile += gridDim.x, s ^= 1) {
        u64 next = tile + gridDim.x;
        if (next < tiles)
            for (u32 k = 0; k < 4; k++) cp_async_16(&stage[s ^ 1][k][t], in + next * 1024 + k * 256 + t);
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        for (u32 k = 0; k < 4; k++) out[tile * 1024 + k * 256 + t] = stage[s][k][t];
    }
}
#endif

#if defined(ASYNCRT_PROBE_BENCH_TMA)
// One thread per CTA streams 8 KiB chunks through 4 stages: bulk loads on
// per-stage mbarriers, bulk stores from the same stage, and a stage is
// reloaded once the store issued before it has read it.
#define BENCH_STAGES 4
#define BENCH_CHUNK 8192
extern "C" __global__ void __launch_bounds__(32) probe_bench_tma(const char *in, char *out, u64 chunks)
{
    __shared__ __align__(8) u64 bars[BENCH_STAGES];
    __shared__ __align__(128) char stage[BENCH_STAGES][BENCH_CHUNK];
    if (threadIdx.x != 0) return;
    for (u32 s = 0; s < BENCH_STAGES; s++) mbar_init(probe_smem(&bars[s]), 1);
    fence_barrier_init();
    u64 grid = gridDim.x;
    for (u32 s = 0; s < BENCH_STAGES; s++) {
        u64 c = blockIdx.x + s * grid;
        if (c >= chunks) break;
        mbar_arrive_expect_tx(probe_smem(&bars[s]), BENCH_CHUNK);
        bulk_load(stage[s], in + c * BENCH_CHUNK, BENCH_CHUNK, probe_smem(&bars[s]));
    }
    for (u64 i = 0;; i++) {
        u64 c = blockIdx.x + i * grid;
        if (c >= chunks) break;
        u32 s = (u32)(i % BENCH_STAGES);
        mbar_wait(probe_smem(&bars[s]), (u32)(i / BENCH_STAGES) & 1);
        fence_proxy_async();
        bulk_store(out + c * BENCH_CHUNK, stage[s], BENCH_CHUNK);
        if (i == 0) continue;
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); // iteration i-1's store has read
        u64 j = i - 1 + BENCH_STAGES, cj = blockIdx.x + j * grid;
        u32 sj = (u32)((i - 1) % BENCH_STAGES);
        if (cj < chunks) {
            mbar_arrive_expect_tx(probe_smem(&bars[sj]), BENCH_CHUNK);
            bulk_load(stage[sj], in + cj * BENCH_CHUNK, BENCH_CHUNK, probe_smem(&bars[sj]));
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
#endif
