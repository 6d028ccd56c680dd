// parity: source=NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420:Samples/3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu; licence=BSD-3-Clause; copyright=NVIDIA Corporation
// parity: arch=sm_90
// parity: run=--kernel oddEvenCountAndSumCG --grid 528 --block 256 --buf in=i32:4194304:rand=7,0,50 --buf odds=i32:1:zeros --buf sums=i32:2:zeros --arg buf:in --arg buf:odds --arg buf:sums --arg u32:4194304
// parity: compare=odds:exact sums:exact
// parity: why=exact although atomicAdd accumulates: integer sums do not depend on the order
// Device code of the NVIDIA CUDA samples, Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.
// BSD-3-Clause: LICENSES/NVIDIA-cuda-samples.txt. Host code removed; see SOURCES.md for any other change.
// cg::binary_partition of a 32-thread tile, cg::reduce over the divergent sub-tiles.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;


/**
 * CUDA kernel device code
 *
 * Creates cooperative groups and performs odd/even counting & summation.
 */
__global__ void oddEvenCountAndSumCG(int *inputArr, int *numOfOdds, int *sumOfOddAndEvens, unsigned int size)
{
    cg::thread_block          cta    = cg::this_thread_block();
    cg::grid_group            grid   = cg::this_grid();
    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);

    for (int i = grid.thread_rank(); i < size; i += grid.size()) {
        int  elem    = inputArr[i];
        auto subTile = cg::binary_partition(tile32, elem & 1);
        if (elem & 1) // Odd numbers group
        {
            int oddGroupSum = cg::reduce(subTile, elem, cg::plus<int>());

            if (subTile.thread_rank() == 0) {
                // Add number of odds present in this group of Odds.
                atomicAdd(numOfOdds, subTile.size());

                // Add local reduction of odds present in this group of Odds.
                atomicAdd(&sumOfOddAndEvens[0], oddGroupSum);
            }
        }
        else // Even numbers group
        {
            int evenGroupSum = cg::reduce(subTile, elem, cg::plus<int>());

            if (subTile.thread_rank() == 0) {
                // Add local reduction of even present in this group of evens.
                atomicAdd(&sumOfOddAndEvens[1], evenGroupSum);
            }
        }
        // reconverge warp so for next loop iteration we ensure convergence of
        // above diverged threads to perform coalesced loads of inputArr.
        cg::sync(tile32);
    }
}

