// parity: source=NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420:Samples/0_Introduction/simplePrintf/simplePrintf.cu; licence=BSD-3-Clause; copyright=NVIDIA Corporation
// parity: arch=sm_90
// parity: run=--kernel testKernel --grid 2,2 --block 2,2,2 --arg i32:10
// parity: compare=stdout:sorted
// parity: why=the kernel's only output is printf; lines of different warps may come in any order, so compare them sorted
// parity: timing=skip (a few microseconds: launch and printf overhead)
// Device code of the NVIDIA CUDA samples, Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.
// BSD-3-Clause: LICENSES/NVIDIA-cuda-samples.txt. Host code removed; see SOURCES.md for any other change.

#include <cstdio>

__global__ void testKernel(int val)
{
    printf("[%d, %d]:\t\tValue is:%d\n",
           blockIdx.y * gridDim.x + blockIdx.x,
           threadIdx.z * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x,
           val);
}

