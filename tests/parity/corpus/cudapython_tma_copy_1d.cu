// parity: source=NVIDIA/cuda-python@3d01d6a3d00ebaf32a7a6cce16e97f95e002f2f6:cuda_core/examples/tma_tensor_map.py; licence=Apache-2.0; copyright=NVIDIA Corporation & Affiliates
// parity: arch=sm_90
// parity: run=--kernel tma_copy --grid 131072 --block 128 --buf src=f32:16777216:rand=1 --buf out=f32:16777216:poison --tmap t=src:box=128 --arg tmap:t --arg buf:out --arg i32:16777216
// parity: compare=out:exact
// The CUDA source string of cuda.core's tma_tensor_map.py example, SPDX-FileCopyrightText: Copyright (c) 2024-2026
// NVIDIA CORPORATION & AFFILIATES, SPDX-License-Identifier: Apache-2.0 (LICENSES/Apache-2.0.txt). The Python host
// code removed; the kernel is as written. A 1-D TMA load (cp.async.bulk.tensor.1d) from a __grid_constant__ map of a
// locally defined 128-byte TensorMap struct, a static __shared__ cuda::barrier beside a static __align__(128) buffer.

#include <cuda/barrier>

// Minimal definition of the 128-byte opaque tensor map struct.
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

static constexpr int TILE_SIZE = 128;
using TmaBarrier = cuda::barrier<cuda::thread_scope_block>;

extern "C"
__global__ void tma_copy(
    const __grid_constant__ TensorMap tensor_map,
    float* output,
    int N)
{
    __shared__ __align__(128) float smem[TILE_SIZE];
    __shared__ TmaBarrier bar;

    const int tid        = threadIdx.x;
    const int tile_start = blockIdx.x * TILE_SIZE;

    if (tid == 0)
    {
        init(&bar, 1);
    }
    __syncthreads();

    if (tid == 0)
    {
        cuda::device::experimental::cp_async_bulk_tensor_1d_global_to_shared(
            smem,
            reinterpret_cast<const CUtensorMap*>(&tensor_map),
            tile_start,
            bar);
        bar.wait(cuda::device::barrier_arrive_tx(bar, 1, TILE_SIZE * sizeof(float)));
    }
    __syncthreads();

    if (tid < TILE_SIZE)
    {
        const int idx = tile_start + tid;
        if (idx < N)
            output[idx] = smem[tid];
    }
}
