// A <cuda/std/complex> kernel: NVRTC's time trace leaves out the header it
// includes first, <cuda/std/detail/__config> (only directives), so the bundle
// maker must find it from the #include lines of what the trace named.
#include <cuda/std/complex>

extern "C" __global__ void bundle_complex(cuda::std::complex<float> *out, const cuda::std::complex<float> *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * a[i];
}
