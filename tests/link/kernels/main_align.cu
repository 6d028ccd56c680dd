// main.cu with the workaround for links without LTO: a static __shared__
// variable of the kernel aligned as the dynamic buffer must be (the
// kernel's shared section takes the largest alignment of its variables,
// which relocatable code keeps; the extern array's own it does not).
#include <cuda/barrier>
extern __device__ float twice(float x);
extern __device__ float bias;
extern "C" __global__ void stage(const float *x, float *y, int n)
{
    __shared__ __align__(128) cuda::barrier<cuda::thread_scope_block> bars[3]; // the workaround
    extern __shared__ __align__(128) unsigned char smem[];
    if (threadIdx.x < 3) init(&bars[threadIdx.x], blockDim.x);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *s = (float *)smem;
    if (i < n) cuda::memcpy_async(&s[threadIdx.x], &x[i], sizeof(float), bars[0]);
    bars[0].arrive_and_wait();
    if (i < n) y[i] = twice(s[threadIdx.x]) + bias + (float)(((unsigned long long)smem & 127) != 0);
}
