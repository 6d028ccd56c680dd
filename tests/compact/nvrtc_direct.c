/* nvrtc_direct.h */
#include "nvrtc_direct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_job.h" /* asyncrt__cuda_h */
#include "diag.h"
#include "embedded.h"

void nvrtc_default_options(const char *arch, nvrtc_options *out)
{
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    snprintf(out->arch, sizeof out->arch, "-arch=%.50s", arch);
    snprintf(out->include, sizeof out->include, "-I%.4000s/include", cuda);
    snprintf(out->cccl, sizeof out->cccl, "%s/cccl", out->include);
    out->count = 0;
    out->items[out->count++] = out->arch;
    out->items[out->count++] = "-std=c++17";
    out->items[out->count++] = "-default-device";
    out->items[out->count++] = out->include;
    out->items[out->count++] = out->cccl;
}

bool nvrtc_compile(const asyncrt_nvrtc *nv, const char *name, const char *source, const char *const *options,
                   size_t count, const char *kernel, nvrtc_out *out)
{
    size_t n = asyncrt__embedded_file_count + asyncrt__std_header_file_count + 1, h = 0;
    const char **names = calloc(n, sizeof *names), **contents = calloc(n, sizeof *contents);
    nvrtcProgram prog = NULL;
    bool ok = names && contents;
    for (size_t i = 0; ok && i < asyncrt__embedded_file_count; i++, h++)
        names[h] = asyncrt__embedded_files[i].name, contents[h] = asyncrt__embedded_files[i].content;
    for (size_t i = 0; ok && i < asyncrt__std_header_file_count; i++, h++)
        names[h] = asyncrt__std_header_files[i].name, contents[h] = asyncrt__std_header_files[i].content;
    if (ok) names[h] = asyncrt__cuda_h.name, contents[h++] = asyncrt__cuda_h.content;
    double start = asyncrt__now_ms();
    nvrtcResult r = NVRTC_ERROR_OUT_OF_MEMORY;
    if (ok) r = nv->nvrtcCreateProgram(&prog, source, name, (int)h, contents, names);
    if (r == NVRTC_SUCCESS && kernel[0]) r = nv->nvrtcAddNameExpression(prog, kernel);
    nvrtcResult compiled = r == NVRTC_SUCCESS ? nv->nvrtcCompileProgram(prog, (int)count, options) : r;
    out->ms = asyncrt__now_ms() - start;
    size_t log_size = 0;
    if (compiled != NVRTC_SUCCESS) {
        snprintf(out->error, sizeof out->error, "NVRTC: %s", nv->nvrtcGetErrorString(compiled));
        if (prog && nv->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size < sizeof out->error / 2)
            nv->nvrtcGetProgramLog(prog, out->error + strlen(out->error));
        ok = false;
    } else if (nv->nvrtcGetPTXSize(prog, &out->ptx_size) != NVRTC_SUCCESS ||
               nv->nvrtcGetCUBINSize(prog, &out->cubin_size) != NVRTC_SUCCESS || !(out->ptx = malloc(out->ptx_size)) ||
               !(out->cubin = malloc(out->cubin_size)) || nv->nvrtcGetPTX(prog, out->ptx) != NVRTC_SUCCESS ||
               nv->nvrtcGetCUBIN(prog, out->cubin) != NVRTC_SUCCESS) {
        snprintf(out->error, sizeof out->error, "reading NVRTC's PTX and CUBIN failed");
        ok = false;
    }
    if (prog && nv->nvrtcDestroyProgram(&prog) != NVRTC_SUCCESS) ok = false;
    free(names);
    free(contents);
    return ok;
}

asyncrt_ptxcompiler *nvrtc_ptxcompiler(const asyncrt_nvrtc *nv, const char *ptx, size_t ptx_size)
{
    char why[1024] = "NVRTC's PTX names no version", path[4200];
    asyncrt_lib_version v;
    asyncrt_ptxcompiler *c = NULL;
    if (!asyncrt__ptx_made_by(ptx, ptx_size, &v) ||
        !asyncrt__ptxcompiler_path(getenv("ASYNCRT_PTXCOMPILER"), nv->path, path, sizeof path, why, sizeof why) ||
        !asyncrt__ptxcompiler_open(path, &v, &c, why, sizeof why))
        printf("the real nvPTXCompiler is not tried: %s\n", why);
    return c;
}

void nvrtc_out_free(nvrtc_out *out)
{
    free(out->ptx);
    free(out->cubin);
    out->ptx = out->cubin = NULL;
}
