// A C++ template kernel, launched through a name expression: --kernel 'scale<double>'.
template <typename T>
__global__ void scale(T *data, T factor, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        data[i] *= factor;
}
