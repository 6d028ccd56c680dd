// A struct passed by value: asyncrt-run --arg struct:f32:A,i32:N,f64:B lays the
// fields out with natural C alignment (float at 0, int at 4, double at 8: 16
// bytes), as the kernel sees struct affine_params.
struct affine_params {
    float scale;
    int n;
    double bias;
};

extern "C" __global__ void affine(affine_params p, const float *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) y[i] = (double)p.scale * x[i] + p.bias;
}
