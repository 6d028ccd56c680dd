// A template kernel with a type and a non-type parameter, plus an explicit
// instantiation: asyncrt-run's hints must show <typename T, int N> and the
// instantiation, and never list a kernel named "float".
template <typename T, int N>
__global__ void scale_n(T *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= static_cast<T>(N);
}

template __global__ void scale_n<float, 4>(float *, int);
