// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel staged_copy --grid 512 --block 256 --buf x=f32:4194304:rand=9 --buf y=f32:4194304:poison --arg buf:x --arg buf:y --arg i32:4194304
// parity: compare=y:exact
// LDGSTS through cuda::pipeline, two stages in flight per thread block.
#include <cuda/pipeline>
#include <cooperative_groups.h>
extern "C" __global__ void staged_copy(const float *x, float *y, int n)
{
    constexpr int stages = 2, tile = 256;
    __shared__ alignas(16) float buf[stages][tile];
    auto block = cooperative_groups::this_thread_block();
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
    auto pipe = cuda::make_pipeline(block, &state);
    int tiles = n / tile, first = blockIdx.x, step = gridDim.x;
    for (int t = first, s = 0; t < tiles || s > 0;) {
        for (; s < stages && t + s * step < tiles; s++) {
            pipe.producer_acquire();
            cuda::memcpy_async(block, buf[(t / step + s) % stages], x + (size_t)(t + s * step) * tile,
                               sizeof(float) * tile, pipe);
            pipe.producer_commit();
        }
        if (s == 0) break;
        pipe.consumer_wait();
        y[(size_t)t * tile + threadIdx.x] = buf[(t / step) % stages][threadIdx.x] * 3.0f;
        pipe.consumer_release();
        t += step;
        s--;
    }
}
