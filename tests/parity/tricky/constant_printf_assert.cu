// parity: source=asyncrt; licence=same as asyncrt
// parity: arch=sm_90
// parity: run=--kernel poly --grid 1024 --block 256 --buf x=f32:262144:rand=3 --buf y=f32:262144:poison --arg buf:x --arg buf:y --arg i32:262144
// parity: compare=y:exact
// __constant__ coefficients, printf and assert in one kernel (both keep
// their own globals and a local stack frame).
#include <cassert>
#include <cstdio>
__constant__ float k_coeff[8] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, -0.03125f, 0.015625f, -0.0078125f};
extern "C" __global__ void poly(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(n > 0);
    if (i >= n) return;
    float v = x[i], r = 0.0f;
    for (int k = 7; k >= 0; k--) r = r * v + k_coeff[k];
    if (i == n) printf("never: %d %f\n", i, r); // kept, never printed
    y[i] = r;
}
