// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel block_sums --grid 2048 --block 256 --buf x=i32:524288:rand=8 --buf y=i32:2048:poison --arg buf:x --arg buf:y
// parity: compare=y:exact
// Cooperative groups: tiled partitions and cg::reduce (warp shuffles).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void block_sums(const int *x, int *y)
{
    __shared__ int warp_sums[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int v = cg::reduce(warp, x[blockIdx.x * 256 + threadIdx.x], cg::plus<int>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
    block.sync();
    if (threadIdx.x < 32) {
        cg::thread_block_tile<8> eight = cg::tiled_partition<8>(warp);
        int w = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0;
        w = cg::reduce(eight, w, cg::plus<int>());
        if (threadIdx.x == 0) y[blockIdx.x] = w;
    }
}
