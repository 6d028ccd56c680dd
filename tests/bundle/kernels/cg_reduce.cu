// A <cooperative_groups.h> kernel. cooperative_groups/reduce.h includes
// "../cooperative_groups.h" and "details/info.h", and details/ includes
// "info.h": quoted names relative to their includer, which a bundle must
// hold under exactly those names (NVRTC matches in-memory headers by name).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void bundle_sum(int *out, const int *in)
{
    cg::thread_block block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    int v = cg::reduce(warp, in[block.thread_rank()], cg::plus<int>());
    if (warp.thread_rank() == 0) atomicAdd(out, v);
}
