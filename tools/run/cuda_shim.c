/* The <cuda.h> a kernel sees under asyncrt-run. The real header needs the C
 * library (stdlib.h, stdint.h), which NVRTC does not have, so NVIDIA's TMA
 * examples that include it for CUtensorMap would not compile. Device code
 * needs only the CUtensorMap type from it; this provides that, with the real
 * header's layout, and the toolkit's CUDA_VERSION. */
#include <cuda.h>

#include "launch.h"

#define STR2(x) #x
#define STR(x) STR2(x)

const char run_cuda_h_shim[] =
    "#pragma once\n"
    "#ifndef CUDA_VERSION\n#define CUDA_VERSION " STR(CUDA_VERSION) "\n#endif\n"
    "#ifndef CU_TENSOR_MAP_NUM_QWORDS\n#define CU_TENSOR_MAP_NUM_QWORDS 16\n"
    "typedef struct CUtensorMap_st {\n"
    "    alignas(128) unsigned long long opaque[CU_TENSOR_MAP_NUM_QWORDS];\n"
    "} CUtensorMap;\n"
    "#endif\n";
