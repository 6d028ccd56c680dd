/* What device code sees besides the caller's source and headers: the
 * toolkit's include directory, the built-in standard headers offered, and
 * the stand-in <cuda.h> (compile_job.h's toolkit step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile_job.h"
#include "toolkit.h"

#ifndef ASYNCRT_TOOLKIT_INCLUDE
#define ASYNCRT_TOOLKIT_INCLUDE "/usr/local/cuda/include"
#endif

static bool has_file(const char *dir, const char *rel)
{
    char *path = asyncrt__format("%s/%s", dir, rel);
    struct stat st;
    bool found = path && stat(path, &st) == 0;
    free(path);
    return found;
}

static bool accept(const char *dir, char *include, size_t size, bool *cccl)
{
    if (!has_file(dir, "cuda/barrier") && !has_file(dir, "cccl/cuda/barrier")) return false;
    snprintf(include, size, "%s", dir);
    *cccl = has_file(dir, "cccl/cuda");
    return true;
}

bool asyncrt__toolkit_find(const asyncrt_settings *settings, char *include, size_t size, bool *cccl, char *why,
                           size_t why_size)
{
    include[0] = '\0';
    *cccl = false;
    const char *mode = settings->toolkit;
    if (mode && *mode && strcmp(mode, "auto") != 0) {
        if (strcmp(mode, "none") == 0) snprintf(why, why_size, "toolkit discovery is off (ASYNCRT_TOOLKIT=none)");
        else
            snprintf(why, why_size, "toolkit discovery is off: ASYNCRT_TOOLKIT=\"%.64s\" is neither \"auto\" nor "
                                    "\"none\"", mode);
        return false;
    }
    const char *roots[] = {settings->cuda_path, settings->cuda_home};
    char dir[4096];
    for (size_t i = 0; i < 2; i++) {
        if (!roots[i] || !*roots[i]) continue;
        snprintf(dir, sizeof dir, "%s/include", roots[i]);
        if (accept(dir, include, size, cccl)) return true;
    }
    const char *fixed[] = {ASYNCRT_TOOLKIT_INCLUDE, "/usr/local/cuda/include"};
    for (size_t i = 0; i < 2; i++)
        if (accept(fixed[i], include, size, cccl)) return true;
    snprintf(why, why_size, "no CUDA toolkit include directory was found (set CUDA_PATH)");
    return false;
}

/* The <cuda.h> device code sees. The real header needs the C library, which
 * NVRTC lacks, yet NVIDIA's TMA examples include it for CUtensorMap: this
 * gives them that type, with the real header's layout, and CUDA_VERSION. */
#define ASYNCRT_STR2(x) #x
#define ASYNCRT_STR(x) ASYNCRT_STR2(x)
const asyncrt_header asyncrt__cuda_h = {
    "cuda.h",
    "#pragma once\n"
    "#ifndef CUDA_VERSION\n#define CUDA_VERSION " ASYNCRT_STR(CUDA_VERSION) "\n#endif\n"
    "#ifndef CU_TENSOR_MAP_NUM_QWORDS\n#define CU_TENSOR_MAP_NUM_QWORDS 16\n"
    "typedef struct CUtensorMap_st {\n"
    "    alignas(128) unsigned long long opaque[CU_TENSOR_MAP_NUM_QWORDS];\n"
    "} CUtensorMap;\n"
    "#endif\n"};

/* The caller's own cuda.h, if it gave one, wins. */
bool asyncrt__job_offers_cuda_h(const asyncrt_compile_job *job)
{
    const asyncrt_compile_options *o = job->opts;
    for (size_t i = 0; i < o->header_count; i++)
        if (strcmp(o->headers[i].name, "cuda.h") == 0) return false;
    return true;
}

/* Built-in standard headers (kernels_src/std/): offered unless the caller
 * turned them off or provides its own of that name, in memory or as a file
 * in one of its -I directories (NVRTC would let the in-memory one win). A
 * bundle's of that name does not count: the built-in wins over it (NVRTC
 * refuses two in-memory headers of one name, so one must yield), as in the
 * toolkit compile the bundle was recorded from, where the built-in was the
 * one read (asyncrt-bundle never bundles these names). */
static bool std_header_offered(const asyncrt_compile_options *o, const char *name)
{
    if (o->no_std_headers) return false;
    for (size_t i = 0; i < o->header_count; i++)
        if (strcmp(o->headers[i].name, name) == 0) return false;
    for (size_t i = 0; i < o->include_dir_count; i++)
        if (has_file(o->include_dirs[i], name)) return false;
    return true;
}

asyncrt_status asyncrt__job_headers(asyncrt_compile_job *job)
{
    free(job->std_offered);
    job->std_offered = calloc(asyncrt__std_header_file_count + 1, sizeof *job->std_offered);
    if (!job->std_offered) {
        job->state = ASYNCRT_COMPILE_FAILED;
        return asyncrt__fail(job->ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory compiling %s", job->source_name);
    }
    for (size_t i = 0; i < asyncrt__std_header_file_count; i++)
        job->std_offered[i] = std_header_offered(job->opts, asyncrt__std_header_files[i].name);
    job->toolkit[0] = '\0';
    job->toolkit_cccl = false;
    if (job->opts->bundle && !job->opts->toolkit_with_bundle) /* no silent fallback to another copy */
        snprintf(job->toolkit_why, sizeof job->toolkit_why, "the toolkit is not searched beside a bundle");
    else if (!asyncrt__toolkit_find(&job->ctx->settings, job->toolkit, sizeof job->toolkit, &job->toolkit_cccl,
                                    job->toolkit_why, sizeof job->toolkit_why))
        asyncrt__log(job->ctx, 1, "warning: %s; <cuda/barrier> and similar headers will not resolve",
                    job->toolkit_why);
    return ASYNCRT_SUCCESS;
}
