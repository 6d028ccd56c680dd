// Two-file kernel of the link tests (issue 27): the device function and the
// __device__ variable live in util.cu; the dynamic shared buffer asks for
// 128-byte alignment beside static barriers (as tests/parity/tricky/
// barrier_align128.cu), and the kernel adds 1 when it does not get it. The
// stage is a plain store and arrive_and_wait: cuda::memcpy_async onto the
// barrier makes compute-sanitizer's synccheck report "Missing wait" on the
// H100 (CUDA 13.0) where the plain form is clean, and the layout is the same.
#include <cuda/barrier>
extern __device__ float twice(float x);
extern __device__ float bias;
extern "C" __global__ void stage(const float *x, float *y, int n)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bars[3];
    extern __shared__ __align__(128) unsigned char smem[];
    if (threadIdx.x < 3) init(&bars[threadIdx.x], blockDim.x);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *s = (float *)smem;
    if (i < n) s[threadIdx.x] = x[i];
    bars[0].arrive_and_wait();
    if (i < n) y[i] = twice(s[threadIdx.x]) + bias + (float)(((unsigned long long)smem & 127) != 0);
}
