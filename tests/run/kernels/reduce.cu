// Two-pass sum, as in the CUDA samples' reduction: pass 1 writes one partial
// sum per block, pass 2 (one block) sums the partials. asyncrt-run runs both
// in one process with --then:
//   --kernel block_sum --grid B --block T --arg buf:x --arg buf:part --arg i32:N
//   --then --kernel block_sum --grid 1 --block T --arg buf:part --arg buf:total --arg i32:B
// Block size: a power of two up to 1024.
extern "C" __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float partial[1024];
    // Block b sums a contiguous chunk, so the CPU reference can do the same.
    int chunk = (n + gridDim.x - 1) / gridDim.x, start = blockIdx.x * chunk;
    int end = start + chunk < n ? start + chunk : n;
    float sum = 0.0f;
    for (int i = start + threadIdx.x; i < end; i += blockDim.x) sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
