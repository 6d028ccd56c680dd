// asyncrt device library: asynchronous data movement in inline PTX.
//
// Offered to every asyncrt compile as <asyncrt/device.cuh>; needs no toolkit
// header. Every wrapper is a template (a defaulted parameter you never name),
// so that including this file on any arch costs nothing, while *using* a
// wrapper on an arch without the instruction stops the compile with a
// static_assert naming the arch it needs. Minimum targets (PTX ISA):
//   sm_80 (7.0): cp.async, cp.async.mbarrier.arrive, mbarrier init/arrive/
//                arrive_drop/inval, test_wait.parity (7.1)
//   sm_90 (8.0): mbarrier try_wait.parity and transaction counts, fences of
//                the async proxy, cp.async.bulk(.tensor), prefetch.tensormap,
//                elect.sync
// Shared-memory pointers are generic pointers into __shared__ memory;
// mbarriers are 8-byte aligned `unsigned long long` in shared memory.
#pragma once

#if defined(__CUDA_ARCH__)
#define ASYNCRT_DEVICE_ARCH __CUDA_ARCH__
#else
// A host pass emits no device code, so there is nothing to check there.
#define ASYNCRT_DEVICE_ARCH 100000
#endif

// For `#if` in user code.
#define ASYNCRT_HAS_CP_ASYNC (ASYNCRT_DEVICE_ARCH >= 800)
#define ASYNCRT_HAS_MBARRIER (ASYNCRT_DEVICE_ARCH >= 800)
#define ASYNCRT_HAS_TMA (ASYNCRT_DEVICE_ARCH >= 900)

namespace asyncrt_detail {
// Depends on T so that the check runs only when a wrapper is instantiated.
template <int Need, typename T>
struct arch_at_least {
    static constexpr bool value = ASYNCRT_DEVICE_ARCH >= Need;
};
} // namespace asyncrt_detail

#define ASYNCRT_NEEDS_SM80(what)                                                        \
    static_assert(::asyncrt_detail::arch_at_least<800, Arch>::value,                   \
                  "asyncrt: " what " needs sm_80 or newer (PTX ISA 7.0); this compile " \
                  "targets an older arch")
#define ASYNCRT_NEEDS_SM90(what)                                                        \
    static_assert(::asyncrt_detail::arch_at_least<900, Arch>::value,                   \
                  "asyncrt: " what " needs sm_90 or newer (PTX ISA 8.0); this compile " \
                  "targets an older arch")

// A CUtensorMap, for `const __grid_constant__ asyncrt_tensor_map` kernel
// parameters (named so it never clashes with cuda.h's CUtensorMap).
struct alignas(64) asyncrt_tensor_map {
    unsigned long long opaque[16];
};
static_assert(sizeof(asyncrt_tensor_map) == 128, "asyncrt_tensor_map must match CUtensorMap");

// The 32-bit shared-window address PTX's .shared operands take.
__device__ __forceinline__ unsigned asyncrt_smem_addr(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- cp.async (LDGSTS), sm_80 ----------------------------------------------

// Copies Bytes (4, 8 or 16) from global to shared memory, cached in L1.
template <int Bytes, typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_ca(void *smem_dst, const void *gmem_src)
{
    ASYNCRT_NEEDS_SM80("cp.async");
    static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "asyncrt: cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(asyncrt_smem_addr(smem_dst)),
                 "l"(gmem_src), "n"(Bytes)
                 : "memory");
}

// Copies 16 bytes, bypassing L1 (.cg exists for 16 bytes only).
template <int Bytes = 16, typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_cg(void *smem_dst, const void *gmem_src)
{
    ASYNCRT_NEEDS_SM80("cp.async");
    static_assert(Bytes == 16, "asyncrt: cp.async.cg copies 16 bytes only; use asyncrt_cp_async_ca");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(asyncrt_smem_addr(smem_dst)),
                 "l"(gmem_src)
                 : "memory");
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_commit_group()
{
    ASYNCRT_NEEDS_SM80("cp.async.commit_group");
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most N of this thread's committed groups are pending.
template <int N, typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_wait_group()
{
    ASYNCRT_NEEDS_SM80("cp.async.wait_group");
    static_assert(N >= 0 && N <= 7, "asyncrt: cp.async.wait_group takes 0..7");
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_wait_all()
{
    ASYNCRT_NEEDS_SM80("cp.async.wait_all");
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// Arrives on `bar` when this thread's earlier cp.async complete, without
// raising its pending count (the count set at init must include this thread).
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_mbarrier_arrive_noinc(unsigned long long *bar)
{
    ASYNCRT_NEEDS_SM80("cp.async.mbarrier.arrive");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(asyncrt_smem_addr(bar))
                 : "memory");
}

// ---- mbarrier, sm_80 (transaction counts and try_wait: sm_90) ------------

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_mbarrier_init(unsigned long long *bar, unsigned count)
{
    ASYNCRT_NEEDS_SM80("mbarrier.init");
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(asyncrt_smem_addr(bar)), "r"(count)
                 : "memory");
}

template <typename Arch = void>
__device__ __forceinline__ unsigned long long asyncrt_mbarrier_arrive(unsigned long long *bar)
{
    ASYNCRT_NEEDS_SM80("mbarrier.arrive");
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
                 : "=l"(state)
                 : "r"(asyncrt_smem_addr(bar))
                 : "memory");
    return state;
}

// Arrives and lowers the expected arrival count of later phases by one.
template <typename Arch = void>
__device__ __forceinline__ unsigned long long asyncrt_mbarrier_arrive_drop(unsigned long long *bar)
{
    ASYNCRT_NEEDS_SM80("mbarrier.arrive_drop");
    unsigned long long state;
    asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];"
                 : "=l"(state)
                 : "r"(asyncrt_smem_addr(bar))
                 : "memory");
    return state;
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_mbarrier_inval(unsigned long long *bar)
{
    ASYNCRT_NEEDS_SM80("mbarrier.inval");
    asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(asyncrt_smem_addr(bar)) : "memory");
}

// True once the phase of the given parity (0 or 1) has completed; never blocks.
template <typename Arch = void>
__device__ __forceinline__ bool asyncrt_mbarrier_test_wait_parity(unsigned long long *bar, unsigned parity)
{
    ASYNCRT_NEEDS_SM80("mbarrier.test_wait.parity");
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(asyncrt_smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}

// Like test_wait but may suspend the thread for a while (sm_90).
template <typename Arch = void>
__device__ __forceinline__ bool asyncrt_mbarrier_try_wait_parity(unsigned long long *bar, unsigned parity)
{
    ASYNCRT_NEEDS_SM90("mbarrier.try_wait.parity");
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(asyncrt_smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}

// Blocks until the phase of the given parity completes (try_wait where the
// arch has it, else a test_wait spin).
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_mbarrier_wait_parity(unsigned long long *bar, unsigned parity)
{
    ASYNCRT_NEEDS_SM80("mbarrier wait");
#if ASYNCRT_DEVICE_ARCH >= 900
    while (!asyncrt_mbarrier_try_wait_parity<Arch>(bar, parity)) {
    }
#else
    while (!asyncrt_mbarrier_test_wait_parity<Arch>(bar, parity)) {
    }
#endif
}

// Arrives and adds `bytes` to the transaction count of the current phase.
template <typename Arch = void>
__device__ __forceinline__ unsigned long long asyncrt_mbarrier_arrive_expect_tx(unsigned long long *bar,
                                                                                unsigned bytes)
{
    ASYNCRT_NEEDS_SM90("mbarrier.arrive.expect_tx");
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(asyncrt_smem_addr(bar)), "r"(bytes)
                 : "memory");
    return state;
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_mbarrier_expect_tx(unsigned long long *bar, unsigned bytes)
{
    ASYNCRT_NEEDS_SM90("mbarrier.expect_tx");
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(asyncrt_smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
}

// ---- fences, sm_90 ---------------------------------------------------------

// Orders this thread's generic-proxy memory accesses before later
// async-proxy ones (e.g. smem writes before a bulk store reads them).
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_fence_proxy_async()
{
    ASYNCRT_NEEDS_SM90("fence.proxy.async");
    asm volatile("fence.proxy.async;" ::: "memory");
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_fence_proxy_async_shared_cta()
{
    ASYNCRT_NEEDS_SM90("fence.proxy.async.shared::cta");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Makes mbarrier.init visible to the async proxy and the cluster.
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_fence_mbarrier_init()
{
    ASYNCRT_NEEDS_SM90("fence.mbarrier_init");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// ---- cp.async.bulk, sm_90 --------------------------------------------------

// Global -> shared, completing `bytes` of `bar`'s transaction count.
// Addresses and size must be multiples of 16.
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_bulk_g2s(void *smem_dst, const void *gmem_src,
                                                          unsigned bytes, unsigned long long *bar)
{
    ASYNCRT_NEEDS_SM90("cp.async.bulk");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     asyncrt_smem_addr(smem_dst)),
                 "l"(gmem_src), "r"(bytes), "r"(asyncrt_smem_addr(bar))
                 : "memory");
}

// Shared -> global, tracked by this thread's bulk groups.
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_bulk_s2g(void *gmem_dst, const void *smem_src, unsigned bytes)
{
    ASYNCRT_NEEDS_SM90("cp.async.bulk");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem_dst),
                 "r"(asyncrt_smem_addr(smem_src)), "r"(bytes)
                 : "memory");
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_bulk_commit_group()
{
    ASYNCRT_NEEDS_SM90("cp.async.bulk.commit_group");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until at most N bulk groups are pending (complete, writes visible).
template <int N, typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_bulk_wait_group()
{
    ASYNCRT_NEEDS_SM90("cp.async.bulk.wait_group");
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Waits until at most N bulk groups still read their source: the shared
// memory of the others may be reused.
template <int N, typename Arch = void>
__device__ __forceinline__ void asyncrt_cp_async_bulk_wait_group_read()
{
    ASYNCRT_NEEDS_SM90("cp.async.bulk.wait_group.read");
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// ---- cp.async.bulk.tensor (TMA), sm_90 -------------------------------------
// `map` is a __grid_constant__ parameter (or global/const memory). Loads
// complete on `bar`; stores join this thread's bulk groups.

#define ASYNCRT_TMA_LOAD(dims, coords, ...)                                                        \
    ASYNCRT_NEEDS_SM90("cp.async.bulk.tensor");                                                    \
    asm volatile("cp.async.bulk.tensor." #dims "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
                 " [%0], [%1, {" coords "}], [%2];" ::"r"(asyncrt_smem_addr(smem_dst)),             \
                 "l"(map), "r"(asyncrt_smem_addr(bar)), __VA_ARGS__                                 \
                 : "memory")
#define ASYNCRT_TMA_STORE(dims, coords, ...)                                                           \
    ASYNCRT_NEEDS_SM90("cp.async.bulk.tensor");                                                        \
    asm volatile("cp.async.bulk.tensor." #dims "d.global.shared::cta.tile.bulk_group [%0, {" coords "}], [%1];" ::"l"( \
                     map),                                                                             \
                 "r"(asyncrt_smem_addr(smem_src)), __VA_ARGS__                                          \
                 : "memory")

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_load_1d(void *smem_dst, const asyncrt_tensor_map *map, int c0,
                                                    unsigned long long *bar)
{
    ASYNCRT_TMA_LOAD(1, "%3", "r"(c0));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_load_2d(void *smem_dst, const asyncrt_tensor_map *map, int c0, int c1,
                                                    unsigned long long *bar)
{
    ASYNCRT_TMA_LOAD(2, "%3, %4", "r"(c0), "r"(c1));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_load_3d(void *smem_dst, const asyncrt_tensor_map *map, int c0, int c1,
                                                    int c2, unsigned long long *bar)
{
    ASYNCRT_TMA_LOAD(3, "%3, %4, %5", "r"(c0), "r"(c1), "r"(c2));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_load_4d(void *smem_dst, const asyncrt_tensor_map *map, int c0, int c1,
                                                    int c2, int c3, unsigned long long *bar)
{
    ASYNCRT_TMA_LOAD(4, "%3, %4, %5, %6", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_load_5d(void *smem_dst, const asyncrt_tensor_map *map, int c0, int c1,
                                                    int c2, int c3, int c4, unsigned long long *bar)
{
    ASYNCRT_TMA_LOAD(5, "%3, %4, %5, %6, %7", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
}

template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_store_1d(const asyncrt_tensor_map *map, int c0, const void *smem_src)
{
    ASYNCRT_TMA_STORE(1, "%2", "r"(c0));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_store_2d(const asyncrt_tensor_map *map, int c0, int c1,
                                                     const void *smem_src)
{
    ASYNCRT_TMA_STORE(2, "%2, %3", "r"(c0), "r"(c1));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_store_3d(const asyncrt_tensor_map *map, int c0, int c1, int c2,
                                                     const void *smem_src)
{
    ASYNCRT_TMA_STORE(3, "%2, %3, %4", "r"(c0), "r"(c1), "r"(c2));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_store_4d(const asyncrt_tensor_map *map, int c0, int c1, int c2, int c3,
                                                     const void *smem_src)
{
    ASYNCRT_TMA_STORE(4, "%2, %3, %4, %5", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
}
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_tma_store_5d(const asyncrt_tensor_map *map, int c0, int c1, int c2, int c3,
                                                     int c4, const void *smem_src)
{
    ASYNCRT_TMA_STORE(5, "%2, %3, %4, %5, %6", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
}

#undef ASYNCRT_TMA_LOAD
#undef ASYNCRT_TMA_STORE

// Pulls a tensor map into the descriptor cache ahead of its first use.
template <typename Arch = void>
__device__ __forceinline__ void asyncrt_prefetch_tensormap(const asyncrt_tensor_map *map)
{
    ASYNCRT_NEEDS_SM90("prefetch.tensormap");
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// True in exactly one active lane of `mask` (the same lane in every caller).
template <typename Arch = void>
__device__ __forceinline__ bool asyncrt_elect_sync(unsigned mask = 0xffffffffu)
{
    ASYNCRT_NEEDS_SM90("elect.sync");
    unsigned elected;
    asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 lane;\n\t"
                 "elect.sync lane|p, %1;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(elected)
                 : "r"(mask));
    return elected != 0;
}
