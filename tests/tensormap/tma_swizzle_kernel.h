/* The raw-box kernel of test_tensormap_swizzle_gpu.c, shared with the CPU
 * test, which compiles it for sm_90.
 *
 * One block per box: TMA-load the 3D box at (0, blockIdx.y * BOX_Y,
 * blockIdx.z * BOX_Z) into 1024-byte aligned shared memory (the swizzle
 * patterns repeat every 1024 bytes, so the alignment makes offsets and
 * addresses swizzle alike) and copy SMEM_BYTES of it, as TMA laid them out,
 * to `out` (4 x the box: room for box rows padded to the 128-byte swizzle
 * span; the H100 raised CUDA_ERROR_ILLEGAL_ADDRESS for swizzle 128B with
 * 32-byte rows in a buffer of the box's own size). `misaligned` gets the buffer's address mod 1024 (expected 0).
 * BOX_Y, BOX_Z and BOX_BYTES come as -D defines. */
#ifndef ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H
#define ASYNCRT_TEST_TMA_SWIZZLE_KERNEL_H

#include "tma_tile_kernel.h" /* TMA_KERNEL_PREAMBLE */

static const char tma_swizzle_kernel_source[] =
    TMA_KERNEL_PREAMBLE
    "extern \"C\" __global__ void load_raw(const __grid_constant__ CUtensorMap map,\n"
    "                                     unsigned char *out, unsigned *misaligned)\n"
    "{\n"
    "    __shared__ alignas(1024) unsigned char smem[SMEM_BYTES];\n"
    "#pragma nv_diag_suppress static_var_with_dynamic_init\n"
    "    __shared__ block_barrier bar;\n"
    "    init_block_barrier(bar);\n"
    "    /* the transaction is the box's bytes, not the buffer's */\n"
    "    wait_for_box(*reinterpret_cast<unsigned char (*)[BOX_BYTES]>(smem), bar, true, &map, 0,\n"
    "                 blockIdx.y * BOX_Y, blockIdx.z * BOX_Z);\n"
    "    const unsigned tile = blockIdx.z * gridDim.y + blockIdx.y;\n"
    "    if (threadIdx.x == 0)\n"
    "        misaligned[tile] = (unsigned)(__cvta_generic_to_shared(smem) % 1024);\n"
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

static const char *const tma_swizzle_kernel_defines[] = {"BOX_Y=8", "BOX_Z=8", "BOX_BYTES=2048", "SMEM_BYTES=8192"};

#endif
