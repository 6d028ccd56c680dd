// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90a
// parity: run=--kernel split_roles --grid 264 --block 256 --buf x=f32:2162688:rand=10 --buf y=f32:2162688:poison --arg buf:x --arg buf:y
// parity: compare=y:exact
// Warp specialisation: the producer warpgroup gives registers back
// (setmaxnreg.dec), the consumer takes them (setmaxnreg.inc), with a
// wgmma fence on the consumer side (sm_90a only).
extern "C" __global__ void __launch_bounds__(256, 1) split_roles(const float *x, float *y)
{
    __shared__ float s[4096];
    int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    size_t base = (size_t)blockIdx.x * 8192;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        for (int i = t; i < 4096; i += 128) s[i] = x[base + i];
    }
    __syncthreads();
    if (wg == 1) {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        float acc[32];
#pragma unroll
        for (int r = 0; r < 32; r++) acc[r] = s[(t * 32 + r) % 4096] * (float)(r + 1);
#pragma unroll
        for (int r = 0; r < 32; r++) y[base + t * 32 + r] = acc[r] + x[base + 4096 + t * 32 + r];
    }
}
