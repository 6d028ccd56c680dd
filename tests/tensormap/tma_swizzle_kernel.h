/* The raw-box kernel of test_tensormap_swizzle_gpu.c, shared with the CPU
 * test, which compiles it for sm_90.
 *
 * One block per box: TMA-load the 3D box at (0, blockIdx.y * BOX_Y,
 * blockIdx.z * BOX_Z) into 1024-byte aligned shared memory (the swizzle
 * patterns repeat every 1024 bytes, so the alignment makes offsets and
 * addresses swizzle alike) and copy SMEM_BYTES of it, as TMA laid them out,
 * to `out` (4 x the box: room for box rows padded to the 128-byte swizzle
 * span; the H100 raised CUDA_ERROR_ILLEGAL_ADDRESS for swizzle 128B with
 * 32-byte rows in a buffer of the box's own size). `misaligned` gets the
 * buffer's address mod 1024 (expected 0), or TIMED_OUT when the load did not
 * complete the barrier's phase (a layout whose byte count is not the box's:
 * the earlier kernel, with an unbounded wait, hung the H100 on one case).
 * BOX_Y, BOX_Z, BOX_BYTES, SMEM_BYTES, WAIT_CYCLES, TIMED_OUT: -D defines. */
#ifndef ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H
#define ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H

static const char tma_swizzle_kernel_source[] =
    "#include <asyncrt/device.cuh>\n"
    "extern \"C\" __global__ void load_raw(const __grid_constant__ asyncrt_tensor_map map,\n"
    "                                     unsigned char *out, unsigned *misaligned,\n"
    "                                     unsigned long long *barrier_word)\n"
    "{\n"
    "    __shared__ alignas(1024) unsigned char smem[SMEM_BYTES];\n"
    "    __shared__ unsigned long long bar;\n"
    "    __shared__ int timed_out;\n"
    "    if (threadIdx.x == 0) {\n"
    "        timed_out = 0;\n"
    "        asyncrt_mbarrier_init(&bar, 1);\n"
    "        asyncrt_fence_mbarrier_init();\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) {\n"
    "        /* the transaction is the box's bytes, not the buffer's */\n"
    "        asyncrt_mbarrier_arrive_expect_tx(&bar, BOX_BYTES);\n"
    "        asyncrt_tma_load_3d(smem, &map, 0, blockIdx.y * BOX_Y, blockIdx.z * BOX_Z, &bar);\n"
    "        /* bounded: a layout whose byte count is not the box's never\n"
    "         * completes the phase; report it instead of hanging */\n"
    "        long long start = clock64();\n"
    "        while (!asyncrt_mbarrier_try_wait_parity(&bar, 0))\n"
    "            if (clock64() - start > WAIT_CYCLES) { timed_out = 1; break; }\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (!timed_out) asyncrt_mbarrier_wait_parity(&bar, 0); /* every thread observes the phase */\n"
    "    const unsigned tile = blockIdx.z * gridDim.y + blockIdx.y;\n"
    "    if (threadIdx.x == 0) {\n"
    "        misaligned[tile] = timed_out ? TIMED_OUT : (unsigned)(asyncrt_smem_addr(smem) % 1024);\n"
    "        /* the raw mbarrier (its layout is undocumented): what a timed-out phase still waits for */\n"
    "        barrier_word[tile] = *(volatile unsigned long long *)&bar;\n"
    "    }\n"
    "    for (int i = threadIdx.x; i < SMEM_BYTES; i += blockDim.x)\n"
    "        out[(size_t)tile * SMEM_BYTES + i] = smem[i];\n"
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
#define SWZ_SMEM_BYTES (4 * SWZ_BOX_BYTES)

/* misaligned[] value of a box whose load did not complete within WAIT_CYCLES (~0.2 s) */
#define SWZ_TIMED_OUT 0xDEADu

static const char *const tma_swizzle_kernel_defines[] = {"BOX_Y=8", "BOX_Z=8", "BOX_BYTES=2048", "SMEM_BYTES=8192",
                                                         "WAIT_CYCLES=400000000LL", "TIMED_OUT=0xDEADu"};

#endif
