// The per-element work of axpy_main.cu.
__device__ float axpy_one(float a, float x, float y) { return fmaf(a, x, y); }
