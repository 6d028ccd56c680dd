/* The raw-box kernel of test_tensormap_swizzle_gpu.c, shared with the CPU
 * test, which compiles it for sm_90.
 *
 * One block per box: TMA-load the 3D box at (0, blockIdx.y * BOX_Y,
 * blockIdx.z * BOX_Z) into 1024-byte aligned shared memory (the swizzle
 * patterns repeat every 1024 bytes, so the alignment makes offsets and
 * addresses swizzle alike), filled with UNWRITTEN first, and copy SMEM_BYTES
 * of it, as TMA laid them out, to `out` (20 x the box: room for box rows
 * padded to the swizzle span, and to see how far a load writes; the H100
 * raised CUDA_ERROR_ILLEGAL_ADDRESS for swizzle 128B with 32-byte rows in a
 * buffer of the box's own size, and interleave 32B overwrote a barrier that
 * followed a 4-box buffer). `misaligned` gets the
 * buffer's address mod 1024 (expected 0), or TIMED_OUT when the load did not
 * complete the barrier's phase (a layout whose byte count is not the box's:
 * the earlier kernel, with an unbounded wait, hung the H100 on one case).
 * BOX_Y, BOX_Z, BOX_BYTES, SMEM_BYTES, WAIT_CYCLES, TIMED_OUT: -D defines. */
#ifndef ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H
#define ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H

static const char tma_swizzle_kernel_source[] =
    "#include <asyncrt/device.cuh>\n"
    "/* the barrier before the buffer: a load that writes past the box cannot clobber it */\n"
    "struct alignas(1024) box_smem {\n"
    "    unsigned long long bar;\n"
    "    int timed_out;\n"
    "    alignas(1024) unsigned char data[SMEM_BYTES];\n"
    "};\n"
    "extern \"C\" __global__ void load_raw(const __grid_constant__ asyncrt_tensor_map map,\n"
    "                                     unsigned char *out, unsigned *misaligned)\n"
    "{\n"
    "    __shared__ box_smem s;\n"
    "    for (int i = threadIdx.x; i < SMEM_BYTES; i += blockDim.x) s.data[i] = UNWRITTEN;\n"
    "    if (threadIdx.x == 0) {\n"
    "        s.timed_out = 0;\n"
    "        asyncrt_mbarrier_init(&s.bar, 1);\n"
    "        asyncrt_fence_mbarrier_init();\n"
    "    }\n"
    "    asyncrt_fence_proxy_async_shared_cta(); /* the pattern, before TMA writes */\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) {\n"
    "        /* the transaction is the box's bytes, not the buffer's */\n"
    "        asyncrt_mbarrier_arrive_expect_tx(&s.bar, BOX_BYTES);\n"
    "        asyncrt_tma_load_3d(s.data, &map, 0, blockIdx.y * BOX_Y, blockIdx.z * BOX_Z, &s.bar);\n"
    "        /* bounded: a load whose byte count is not the box's never\n"
    "         * completes the phase; report it instead of hanging */\n"
    "        long long start = clock64();\n"
    "        while (!asyncrt_mbarrier_try_wait_parity(&s.bar, 0))\n"
    "            if (clock64() - start > WAIT_CYCLES) { s.timed_out = 1; break; }\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (!s.timed_out) asyncrt_mbarrier_wait_parity(&s.bar, 0); /* every thread observes the phase */\n"
    "    const unsigned tile = blockIdx.z * gridDim.y + blockIdx.y;\n"
    "    if (threadIdx.x == 0)\n"
    "        misaligned[tile] = s.timed_out ? TIMED_OUT : (unsigned)(asyncrt_smem_addr(s.data) % 1024);\n"
    "    for (int i = threadIdx.x; i < SMEM_BYTES; i += blockDim.x)\n"
    "        out[(size_t)tile * SMEM_BYTES + i] = s.data[i];\n"
    "}\n";

/* u16 tensor 16 x 16 x 16 (innermost first): rows of 32 bytes, the C16 group
 * of a 32-byte interleaved layout. Box 16 x 8 x 8 = 2048 bytes; 2 x 2 boxes. */
#define SWZ_DIM0 16
#define SWZ_DIM1 16
#define SWZ_DIM2 16
#define SWZ_BOX_Y 8
#define SWZ_BOX_Z 8
#define SWZ_ELEM 2
#define SWZ_BOX_BYTES (SWZ_DIM0 * SWZ_BOX_Y * SWZ_BOX_Z * SWZ_ELEM)
#define SWZ_ROW_BYTES (SWZ_DIM0 * SWZ_ELEM)
#define SWZ_SMEM_BYTES (20 * SWZ_BOX_BYTES) /* room to see how far a load writes */
#define SWZ_UNWRITTEN 0xA5                  /* shared memory's pattern before the load */

/* misaligned[] value of a box whose load did not complete within WAIT_CYCLES (~0.2 s) */
#define SWZ_TIMED_OUT 0xDEADu

static const char *const tma_swizzle_kernel_defines[] = {"BOX_Y=8", "BOX_Z=8", "BOX_BYTES=2048", "SMEM_BYTES=40960",
                                                         "WAIT_CYCLES=400000000LL", "TIMED_OUT=0xDEADu", "UNWRITTEN=0xA5"};

#endif
