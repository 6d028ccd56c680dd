// parity: source=NVIDIA/cuda-python@b6eec508f1e30aebf7b3b93562e254d4e80cdb43:cuda_core/examples/thread_block_cluster.py; licence=Apache-2.0; copyright=NVIDIA Corporation & Affiliates
// parity: arch=sm_90
// parity: run=--kernel check_cluster_info --grid 8 --cluster 2 --block 32 --buf grid_dims=u32:3:poison --buf cluster_dims=u32:3:poison --buf block_dims=u32:3:poison --arg buf:grid_dims --arg buf:cluster_dims --arg buf:block_dims
// parity: compare=grid_dims:exact cluster_dims:exact block_dims:exact stdout
// parity: why=one thread prints, so stdout is compared as it is
// parity: timing=skip (8 blocks of one warp, a few microseconds: launch and printf overhead)
// The CUDA source string of cuda.core's thread_block_cluster.py example, SPDX-FileCopyrightText: Copyright (c)
// 2024-2025 NVIDIA CORPORATION & AFFILIATES, SPDX-License-Identifier: Apache-2.0 (LICENSES/Apache-2.0.txt).
// The Python host code removed; the kernel is as written. Thread block clusters through cooperative groups
// (grid.cluster_rank, dim_clusters) and device printf.

#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

extern "C"
__global__ void check_cluster_info(unsigned int* grid_dims, unsigned int* cluster_dims, unsigned int* block_dims) {
    auto g = cg::this_grid();
    auto b = cg::this_thread_block();

    if (g.cluster_rank() == 0 && g.block_rank() == 0 && g.thread_rank() == 0) {
        // Store grid dimensions (in blocks)
        grid_dims[0] = g.dim_blocks().x;
        grid_dims[1] = g.dim_blocks().y;
        grid_dims[2] = g.dim_blocks().z;

        // Store cluster dimensions
        cluster_dims[0] = g.dim_clusters().x;
        cluster_dims[1] = g.dim_clusters().y;
        cluster_dims[2] = g.dim_clusters().z;

        // Store block dimensions (in threads)
        block_dims[0] = b.dim_threads().x;
        block_dims[1] = b.dim_threads().y;
        block_dims[2] = b.dim_threads().z;

        // Also print to console
        printf("grid dim: (%u, %u, %u)\n", g.dim_blocks().x, g.dim_blocks().y, g.dim_blocks().z);
        printf("cluster dim: (%u, %u, %u)\n", g.dim_clusters().x, g.dim_clusters().y, g.dim_clusters().z);
        printf("block dim: (%u, %u, %u)\n", b.dim_threads().x, b.dim_threads().y, b.dim_threads().z);
    }
}
