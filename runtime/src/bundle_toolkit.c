/* Toolkit discovery (compile.c's -I), with ASYNCRT_TOOLKIT to turn it off. */
#include "bundle_toolkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef ASYNCRT_TOOLKIT_INCLUDE
#define ASYNCRT_TOOLKIT_INCLUDE "/usr/local/cuda/include"
#endif

static bool has(const char *dir, const char *rel)
{
    char path[4200];
    struct stat st;
    return (size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) < sizeof path && stat(path, &st) == 0;
}

static bool accept(const char *dir, char *include, char *cccl, size_t size)
{
    if (!has(dir, "cuda/barrier") && !has(dir, "cccl/cuda/barrier")) return false;
    snprintf(include, size, "%s", dir);
    if (has(dir, "cccl/cuda")) snprintf(cccl, size, "%s/cccl", dir);
    return true;
}

asyncrt_toolkit_env asyncrt__toolkit_env(void)
{
    return (asyncrt_toolkit_env){getenv("ASYNCRT_TOOLKIT"), getenv("CUDA_PATH"), getenv("CUDA_HOME")};
}

bool asyncrt__toolkit_find(const asyncrt_toolkit_env *env, char *include, char *cccl, size_t size, char *why,
                           size_t why_size)
{
    include[0] = cccl[0] = '\0';
    const char *mode = env->mode;
    if (mode && *mode && strcmp(mode, "auto") != 0) {
        if (strcmp(mode, "none") == 0) snprintf(why, why_size, "toolkit discovery is off (ASYNCRT_TOOLKIT=none)");
        else
            snprintf(why, why_size, "toolkit discovery is off: ASYNCRT_TOOLKIT=\"%.64s\" is neither \"auto\" nor "
                                    "\"none\"", mode);
        return false;
    }
    const char *roots[] = {env->cuda_path, env->cuda_home};
    char dir[4096];
    for (size_t i = 0; i < 2; i++) {
        if (!roots[i] || !*roots[i]) continue;
        snprintf(dir, sizeof dir, "%s/include", roots[i]);
        if (accept(dir, include, cccl, size)) return true;
    }
    const char *fixed[] = {ASYNCRT_TOOLKIT_INCLUDE, "/usr/local/cuda/include"};
    for (size_t i = 0; i < 2; i++)
        if (accept(fixed[i], include, cccl, size)) return true;
    snprintf(why, why_size, "no CUDA toolkit include directory was found (set CUDA_PATH)");
    return false;
}
