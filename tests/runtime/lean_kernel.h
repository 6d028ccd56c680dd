/* The <cuda/barrier> kernel of issue 13 item 7, shared by the lean tests:
 * y[i] = 2 x[i] + 1, staged through shared memory with cuda::memcpy_async. */
#ifndef ASYNCRT_TEST_LEAN_KERNEL_H
#define ASYNCRT_TEST_LEAN_KERNEL_H
static const char *k_lean_barrier_kernel =
    "#include <cuda/barrier>\n"
    "extern \"C\" __global__ void barrier_scale(const float *x, float *y, int n) {\n"
    "  __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
    "  __shared__ float s[256];\n"
    "  if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
    "  __syncthreads();\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) cuda::memcpy_async(&s[threadIdx.x], &x[i], sizeof(float), bar);\n"
    "  bar.arrive_and_wait();\n"
    "  if (i < n) y[i] = 2.0f * s[threadIdx.x] + 1.0f;\n"
    "}\n";
/* Any ptxas-affecting option keeps NVRTC's own CUBIN; this one changes nothing else. */
static const char *const k_lean_off_options[] = {"-Xptxas=-O3"};
#endif
