// One 64-point complex-to-complex forward FFT per block of 8 threads. The
// FFT is cuFFTDx's, generated as LTO-IR by NVIDIA's libmathdx
// (tests/link/mathdx/make_fft_ltoir.sh) and linked at run time with -lto:
// thread t holds elements t + 8i (i < 8) in registers, 512 bytes of shared
// memory are its scratch.
extern "C" __device__ void asyncrt_fft64_c2c_f32(float2 *rmem, char *smem);
extern "C" __global__ void fft64(const float2 *in, float2 *out)
{
    extern __shared__ __align__(16) char smem[];
    float2 r[8];
    const float2 *x = in + blockIdx.x * 64;
    for (int i = 0; i < 8; i++) r[i] = x[threadIdx.x + i * 8];
    asyncrt_fft64_c2c_f32(r, smem);
    for (int i = 0; i < 8; i++) out[blockIdx.x * 64 + threadIdx.x + i * 8] = r[i];
}
