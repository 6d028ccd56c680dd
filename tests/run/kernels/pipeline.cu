// Multi-stage cp.async (LDGSTS) copies through cuda::pipeline, in the style of
// the CUDA programming guide's "Multi-Stage Asynchronous Data Copies". Each
// block streams `batches` tiles of blockDim.x floats through STAGES shared
// buffers (dynamic shared memory: STAGES * blockDim.x * 4 bytes) and writes
// out = 2 * in + 1.
#include <cooperative_groups.h>
#include <cuda/pipeline>

namespace cg = cooperative_groups;

constexpr int STAGES = 3;

extern "C" __global__ void pipeline_axpb(const float *in, float *out, int batches)
{
    auto block = cg::this_thread_block();
    extern __shared__ float shared[]; // STAGES * block.size() floats
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    auto pipeline = cuda::make_pipeline(block, &state);

    const size_t tile = block.size();
    const size_t base = (size_t)blockIdx.x * batches * tile;
    for (int compute = 0, fetch = 0; compute < batches; ++compute) {
        // Keep up to STAGES batches in flight.
        for (; fetch < compute + STAGES && fetch < batches; ++fetch) {
            pipeline.producer_acquire();
            cuda::memcpy_async(block, shared + (fetch % STAGES) * tile, in + base + fetch * tile,
                               sizeof(float) * tile, pipeline);
            pipeline.producer_commit();
        }
        pipeline.consumer_wait();
        const float *stage = shared + (compute % STAGES) * tile;
        out[base + compute * tile + block.thread_rank()] = 2.0f * stage[block.thread_rank()] + 1.0f;
        pipeline.consumer_release();
    }
}
