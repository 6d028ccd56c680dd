/* The TMA tile kernels of test_tensormap_gpu.c, shared with the CPU test,
 * which compiles them for sm_90 so that a syntax error shows up without a GPU.
 *
 * One block per box: TMA-load the box at (blockIdx * box) with the input map
 * (out-of-bounds elements read as zero), copy the raw box to `tiles`, XOR
 * every element with `key`, then TMA-store the box at the same coordinates
 * with the output map (out-of-bounds elements are not written). The pattern
 * is the TMA example of the CUDA C++ Programming Guide.
 * BOX2_X/BOX2_Y and BOX3_X/BOX3_Y/BOX3_Z come as -D defines. */
#ifndef ASYNCRT_TEST_TMA_TILE_KERNEL_H
#define ASYNCRT_TEST_TMA_TILE_KERNEL_H

/* What every TMA test kernel starts with (also tma_swizzle_kernel.h): the
 * barrier's setup, and waiting for a 2D or 3D box loaded into smem. */
#define TMA_KERNEL_PREAMBLE                                                                  \
    "#include <cuda/barrier>\n"                                                              \
    "// cuda/barrier only forward-declares CUtensorMap; this is its layout.\n"               \
    "struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; };\n"                \
    "using block_barrier = cuda::barrier<cuda::thread_scope_block>;\n"                       \
    "namespace cde = cuda::device::experimental;\n"                                          \
    "\n"                                                                                     \
    "__device__ void init_block_barrier(block_barrier &bar)\n"                               \
    "{\n"                                                                                    \
    "    if (threadIdx.x == 0) {\n"                                                          \
    "        init(&bar, blockDim.x);\n"                                                      \
    "        cde::fence_proxy_async_shared_cta();\n"                                         \
    "    }\n"                                                                                \
    "    __syncthreads();\n"                                                                 \
    "}\n"                                                                                    \
    "\n"                                                                                     \
    "template <typename T, int N>\n"                                                         \
    "__device__ void wait_for_box(T (&smem)[N], block_barrier &bar, bool issue_load_3d,\n"   \
    "                             const CUtensorMap *map, int x, int y, int z)\n"            \
    "{\n"                                                                                    \
    "    block_barrier::arrival_token token;\n"                                              \
    "    if (threadIdx.x == 0) {\n"                                                          \
    "        if (issue_load_3d)\n"                                                           \
    "            cde::cp_async_bulk_tensor_3d_global_to_shared(smem, map, x, y, z, bar);\n"  \
    "        else\n"                                                                         \
    "            cde::cp_async_bulk_tensor_2d_global_to_shared(smem, map, x, y, bar);\n"     \
    "        // The whole box arrives, out-of-bounds part included (zero-filled).\n"         \
    "        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem));\n"               \
    "    } else {\n"                                                                         \
    "        token = bar.arrive();\n"                                                        \
    "    }\n"                                                                                \
    "    bar.wait(cuda::std::move(token));\n"                                                \
    "}\n"                                                                                    \
    "\n"

static const char tma_tile_kernel_source[] =
    TMA_KERNEL_PREAMBLE
    "template <typename T, int N>\n"
    "__device__ void copy_and_mark(T (&smem)[N], T *tiles, unsigned tile, T key)\n"
    "{\n"
    "    for (int i = threadIdx.x; i < N; i += blockDim.x) {\n"
    "        tiles[(size_t)tile * N + i] = smem[i];\n"
    "        smem[i] ^= key;\n"
    "    }\n"
    "    // Make the generic-proxy writes visible to the TMA (async proxy) store.\n"
    "    cde::fence_proxy_async_shared_cta();\n"
    "    __syncthreads();\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void tile2d(const __grid_constant__ CUtensorMap in_map,\n"
    "                                   const __grid_constant__ CUtensorMap out_map,\n"
    "                                   unsigned *tiles, unsigned key)\n"
    "{\n"
    "    __shared__ alignas(128) unsigned smem[BOX2_Y * BOX2_X];\n"
    "#pragma nv_diag_suppress static_var_with_dynamic_init\n"
    "    __shared__ block_barrier bar;\n"
    "    init_block_barrier(bar);\n"
    "    const int x = blockIdx.x * BOX2_X, y = blockIdx.y * BOX2_Y;\n"
    "    wait_for_box(smem, bar, false, &in_map, x, y, 0);\n"
    "    copy_and_mark(smem, tiles, blockIdx.y * gridDim.x + blockIdx.x, key);\n"
    "    if (threadIdx.x == 0) {\n"
    "        cde::cp_async_bulk_tensor_2d_shared_to_global(&out_map, x, y, smem);\n"
    "        cde::cp_async_bulk_commit_group();\n"
    "        cde::cp_async_bulk_wait_group_read<0>();\n"
    "    }\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void tile3d(const __grid_constant__ CUtensorMap in_map,\n"
    "                                   const __grid_constant__ CUtensorMap out_map,\n"
    "                                   unsigned short *tiles, unsigned short key)\n"
    "{\n"
    "    __shared__ alignas(128) unsigned short smem[BOX3_Z * BOX3_Y * BOX3_X];\n"
    "#pragma nv_diag_suppress static_var_with_dynamic_init\n"
    "    __shared__ block_barrier bar;\n"
    "    init_block_barrier(bar);\n"
    "    const int x = blockIdx.x * BOX3_X, y = blockIdx.y * BOX3_Y, z = blockIdx.z * BOX3_Z;\n"
    "    wait_for_box(smem, bar, true, &in_map, x, y, z);\n"
    "    unsigned tile = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    "    copy_and_mark(smem, tiles, tile, key);\n"
    "    if (threadIdx.x == 0) {\n"
    "        cde::cp_async_bulk_tensor_3d_shared_to_global(&out_map, x, y, z, smem);\n"
    "        cde::cp_async_bulk_commit_group();\n"
    "        cde::cp_async_bulk_wait_group_read<0>();\n"
    "    }\n"
    "}\n";

/* The boxes, shared by the kernels' defines and the host's maps. */
#define TMA_BOX2_X 32
#define TMA_BOX2_Y 16
#define TMA_BOX3_X 16
#define TMA_BOX3_Y 4
#define TMA_BOX3_Z 3

static const char *const tma_tile_kernel_defines[] = {
    "BOX2_X=32", "BOX2_Y=16", "BOX3_X=16", "BOX3_Y=4", "BOX3_Z=3"};

#endif
