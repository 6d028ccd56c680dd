// parity: source=asyncrt (issue 22's 15-line reproducer); licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel stage --grid 4096 --block 256 --smem 1024 --buf x=f32:1048576:rand=1 --buf y=f32:1048576:poison --arg buf:x --arg buf:y --arg i32:1048576
// parity: compare=y:exact
// Static shared barriers beside a 128-byte aligned dynamic buffer: the lean
// image once started the buffer 48 bytes past a 128-byte boundary.
#include <cuda/barrier>
extern "C" __global__ void stage(const float *x, float *y, int n)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bars[3];
    extern __shared__ __align__(128) unsigned char smem[];
    if (threadIdx.x < 3) init(&bars[threadIdx.x], blockDim.x);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *s = (float *)smem;
    if (i < n) cuda::memcpy_async(&s[threadIdx.x], &x[i], sizeof(float), bars[0]);
    bars[0].arrive_and_wait();
    // the buffer's own address is part of the result: misaligned shows
    if (i < n) y[i] = 2.0f * s[threadIdx.x] + 1.0f + (float)(((unsigned long long)smem & 127) != 0);
}
