// The speed kernel of the link tests and asyncrt-bench --link: a
// grid-stride y = a * x + y whose per-element work lives in axpy_util.cu
// (a call across files, inlined only by LTO).
extern __device__ float axpy_one(float a, float x, float y);
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = axpy_one(a, x[i], y[i]);
}
