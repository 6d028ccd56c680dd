// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel to_fp8 --grid 1024 --block 256 --buf x=f32:262144:rand=6,-400,400 --buf y=u8:262144:poison --arg buf:x --arg buf:y --arg i32:262144
// parity: compare=y:exact
// fp8 (e4m3) conversion with saturation.
#include <cuda_fp8.h>
extern "C" __global__ void to_fp8(const float *x, unsigned char *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (unsigned char)__nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
}
