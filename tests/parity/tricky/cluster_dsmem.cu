// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel neighbour_sum --grid 1024 --block 128 --cluster 4 --buf x=f32:131072:rand=7 --buf y=f32:131072:poison --arg buf:x --arg buf:y
// parity: compare=y:exact
// Thread block clusters: each block reads its neighbour's shared memory
// (distributed shared memory) through cooperative_groups.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void neighbour_sum(const float *x, float *y)
{
    __shared__ float s[128];
    cg::cluster_group cluster = cg::this_cluster();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = x[i];
    cluster.sync();
    unsigned next = (cluster.block_rank() + 1) % cluster.num_blocks();
    float *other = cluster.map_shared_rank(s, next);
    y[i] = s[threadIdx.x] + other[(threadIdx.x + 1) % 128];
    cluster.sync();
}
