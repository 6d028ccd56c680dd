// Defines twice() again: linked with util.cu, a duplicate symbol.
__device__ float twice(float x) { return 3.0f * x; }
