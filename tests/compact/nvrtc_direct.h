/* For the compact tests: NVRTC called directly, for the PTX and the CUBIN of
 * one nvrtcProgram, as the compile step will have them. The names of
 * internal-linkage globals hold a per-compile hash
 * (_INTERNAL_..._cu_55af5023_18851...), so PTX of another compile than the
 * CUBIN's is another program. Options and in-memory headers are asyncrt's
 * defaults (compile/key.c, compile/nvrtc_run.c). */
#ifndef ASYNCRT_NVRTC_DIRECT_H
#define ASYNCRT_NVRTC_DIRECT_H

#include <stdbool.h>
#include <stddef.h>

#include "nvrtc_loader.h"
#include "ptx_assemble.h"

typedef struct nvrtc_out {
    char *ptx, *cubin;
    size_t ptx_size, cubin_size;
    double ms;
    char error[1024];
} nvrtc_out;

/* asyncrt's default options for `arch`: -arch, -std=c++17, -default-device,
 * the toolkit's include folders ($CUDA_PATH, else /usr/local/cuda). */
typedef struct nvrtc_options {
    char arch[64], include[4200], cccl[4300];
    const char *items[8];
    size_t count;
} nvrtc_options;
void nvrtc_default_options(const char *arch, nvrtc_options *out);

/* Compiles `source` (name expression `kernel`, "" for none); false with
 * out->error. Free with nvrtc_out_free. */
bool nvrtc_compile(const asyncrt_nvrtc *nv, const char *name, const char *source, const char *const *options,
                   size_t count, const char *kernel, nvrtc_out *out);
void nvrtc_out_free(nvrtc_out *out);

/* The user's nvPTXCompiler of the version of the NVRTC that wrote `ptx`,
 * where tools/setup-ptxcompiler.sh built it beside `nv` (or
 * ASYNCRT_PTXCOMPILER names it); else NULL, and why is printed. */
asyncrt_ptxcompiler *nvrtc_ptxcompiler(const asyncrt_nvrtc *nv, const char *ptx, size_t ptx_size);

#endif
