// A <cuda/pipeline> kernel: one stage of cuda::memcpy_async through a thread-scope pipeline.
#include <cuda/pipeline>

extern "C" __global__ void bundle_pipeline(float *out, const float *in, int n)
{
    __shared__ float tile[256];
    auto pipe = cuda::make_pipeline();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[i < n ? i : 0], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    if (i < n) out[i] = tile[threadIdx.x] + 1.0f;
    pipe.consumer_release();
}
