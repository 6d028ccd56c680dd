// Grid-wide synchronisation with cooperative groups: every thread writes its
// element, the whole grid waits, then each thread reads a neighbour's element
// written by another block. Without a cooperative launch grid.sync() is
// undefined (it hangs or faults), so this needs asyncrt-run --cooperative.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void rotate_after_sync(const int *in, int *tmp, int *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) tmp[i] = 3 * in[i];
    grid.sync();
    // Element i takes the value computed for (i + 1 + n / 2) % n: another block's.
    for (int i = grid.thread_rank(); i < n; i += grid.size()) out[i] = tmp[(i + 1 + n / 2) % n] + 1;
}
