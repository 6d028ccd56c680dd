// Multi-stage cp.async (LDGSTS) copies through cuda::pipeline, in the style of
// the CUDA programming guide's pipeline examples: each thread streams
// `batches` elements through STAGES shared-memory slots with its own
// (thread-scope) pipeline, and writes out = 2 * in + 1. Dynamic shared memory:
// STAGES * blockDim.x * 4 bytes.
#include <cuda/pipeline>

constexpr int STAGES = 3;

extern "C" __global__ void pipeline_axpb(const float *in, float *out, int batches)
{
    extern __shared__ float shared[]; // STAGES slots of blockDim.x floats
    cuda::pipeline<cuda::thread_scope_thread> pipeline = cuda::make_pipeline();

    const size_t tile = blockDim.x;
    const size_t base = (size_t)blockIdx.x * batches * tile + threadIdx.x;
    for (int compute = 0, fetch = 0; compute < batches; ++compute) {
        // Keep up to STAGES batches in flight.
        for (; fetch < compute + STAGES && fetch < batches; ++fetch) {
            pipeline.producer_acquire();
            cuda::memcpy_async(&shared[(fetch % STAGES) * tile + threadIdx.x], &in[base + fetch * tile],
                               sizeof(float), pipeline);
            pipeline.producer_commit();
        }
        pipeline.consumer_wait();
        out[base + compute * tile] = 2.0f * shared[(compute % STAGES) * tile + threadIdx.x] + 1.0f;
        pipeline.consumer_release();
    }
}
