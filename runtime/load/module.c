/* Loading images on the device, finding kernels, launching them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/graph.h"
#include "cache.h"
#include "capture.h"
#include "context.h"
#include "launch_preflight.h"
#include "library.h"
#include "nvtx.h"
#include "program.h"
#include "target.h"

#define JIT_LOG_SIZE 16384

struct asyncrt_kernel {
    asyncrt_module *module;
    char *name;
    CUfunction function;
    size_t raised_shared; /* the dynamic shared-memory limit already set */
    size_t *param_sizes;  /* from cuFuncGetParamInfo, read once */
    size_t param_count;
    bool params_read;
    bool launched;        /* once: loaded, even where the driver cannot say (capture.c) */
    asyncrt_kernel *next;
};

struct asyncrt_module {
    asyncrt_context *ctx;
    CUmodule handle;          /* the library's on this device (not ours to unload), or loaded here */
    asyncrt_library *library; /* NULL: handle came from cuModuleLoadDataEx */
    asyncrt_program *program; /* for lowered names */
    asyncrt_kernel *kernels;
};

/* The program's source name for messages; an image of the caller's has none. */
static const char *name_of(const asyncrt_program *p)
{
    return p->source_name && *p->source_name ? p->source_name : "image";
}

static asyncrt_status module_load(asyncrt_context *ctx, const asyncrt_program *program,
                                  asyncrt_module **out)
{
    *out = NULL;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    /* PTX: the load rule (target.h), before the driver's own "unsupported
     * PTX version"; this NVRTC made it (the cache keys on NVRTC). A CUBIN
     * is not held here, so loading one needs no NVRTC facts. */
    asyncrt__arch arch;
    if (program->ptx && asyncrt__arch_parse(program->arch, &arch)) ASYNCRT_TRY(asyncrt__arch_loadable(ctx, &arch));
    ASYNCRT_TRY(asyncrt__capture_refuse(ctx, "loading module", name_of(program)));
    asyncrt_status s = ASYNCRT_SUCCESS;
    asyncrt_module *m = calloc(1, sizeof *m);
    char *info = calloc(1, JIT_LOG_SIZE), *error = calloc(1, JIT_LOG_SIZE);
    if (m) m->program = asyncrt__program_clone(program);
    if (!m || !m->program || !info || !error) {
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
        goto done;
    }
    /* A CUBIN: one library for every device (library.h); this device's
     * module from it, which loads it here and so fails here if it must. */
    bool handed = false; /* the image went to the driver in this call */
    if ((s = asyncrt__library_acquire(ctx, program, &m->library, &handed)) != ASYNCRT_SUCCESS) goto done;
    if (m->library) {
        CUresult r = ctx->drv->cuLibraryGetModule(&m->handle, asyncrt__library_handle(m->library));
        if (r != CUDA_SUCCESS) {
            s = asyncrt__fail_cu(ctx, ASYNCRT_ERROR_MODULE_LOAD, r, "cuLibraryGetModule",
                                 "CUBIN image for %s on device %d (compute capability %d.%d)", program->arch,
                                 ctx->info.ordinal, ctx->info.cc_major, ctx->info.cc_minor);
            goto done;
        }
        goto loaded;
    }
    CUjit_option keys[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {info, (void *)(uintptr_t)JIT_LOG_SIZE, error, (void *)(uintptr_t)JIT_LOG_SIZE};
    CUresult r = ctx->drv->cuModuleLoadDataEx(&m->handle, program->image, 4, keys, values);
    if (r != CUDA_SUCCESS) {
        /* PTX for compute_XY meets ptxas only here: say what the fix is */
        bool specific = program->ptx && strstr(error, "not supported on .target");
        s = asyncrt__fail_cu(ctx, ASYNCRT_ERROR_MODULE_LOAD, r, "cuModuleLoadDataEx",
                            "%s image for %s on device %d (compute capability %d.%d)%s%s%s%s%s",
                            program->ptx ? "PTX" : "CUBIN", program->arch, ctx->info.ordinal,
                            ctx->info.cc_major, ctx->info.cc_minor, *error ? "\nJIT error log:\n" : "",
                            error, *info ? "\nJIT info log:\n" : "", info,
                            specific ? "\nhint: the kernel uses instructions the target lacks; "
                                       "arch-specific ones (wgmma, setmaxnreg, tcgen05) need an 'a' "
                                       "target such as compute_90a or sm_90a" : "");
        goto done;
    }
    if (*info) asyncrt__log(ctx, 2, "JIT info log: %s", info);
    handed = true;
loaded:
    asyncrt__cache_count_load(ctx->cache, handed);
    m->ctx = ctx;
    *out = m;
    m = NULL;
done:
    if (m) {
        asyncrt__library_release(ctx, m->library);
        asyncrt_program_destroy(m->program);
        free(m);
    }
    free(info);
    free(error);
    return s;
}

asyncrt_status asyncrt_module_load(asyncrt_context *ctx, const asyncrt_program *program,
                                   asyncrt_module **out)
{
    asyncrt__enter(ctx);
    asyncrt__range_push(ASYNCRT_RANGE_LOAD, "load %s (%s)", name_of(program), program->arch);
    asyncrt_status s = module_load(ctx, program, out);
    asyncrt__range_pop();
    return asyncrt__leave(ctx, s);
}

static asyncrt_status module_make_resident(asyncrt_module *m)
{
    ASYNCRT_TRY(asyncrt__require_device(m->ctx));
    unsigned loaded = 0;
    ASYNCRT_TRY(asyncrt__module_load_functions(m->ctx, m->handle, name_of(m->program), &loaded));
    asyncrt__log(m->ctx, 2, "module '%s': %u function%s loaded eagerly", name_of(m->program), loaded,
                 loaded == 1 ? "" : "s");
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_module_make_resident(asyncrt_module *m)
{
    asyncrt__enter(m->ctx);
    return asyncrt__leave(m->ctx, module_make_resident(m));
}

void asyncrt_module_destroy(asyncrt_module *m)
{
    if (!m) return;
    while (m->kernels) {
        asyncrt_kernel *k = m->kernels;
        m->kernels = k->next;
        free(k->param_sizes);
        free(k->name);
        free(k);
    }
    if (m->library)
        asyncrt__library_release(m->ctx, m->library);
    else if (m->handle && asyncrt__require_device(m->ctx) == ASYNCRT_SUCCESS)
        m->ctx->drv->cuModuleUnload(m->handle);
    asyncrt_program_destroy(m->program);
    free(m);
}

static asyncrt_status module_get_kernel(asyncrt_module *m, const char *name, asyncrt_kernel **out)
{
    asyncrt_context *ctx = m->ctx;
    *out = NULL;
    for (asyncrt_kernel *k = m->kernels; k; k = k->next)
        if (strcmp(k->name, name) == 0) {
            *out = k;
            return ASYNCRT_SUCCESS;
        }
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    const char *lowered = asyncrt_program_lowered_name(m->program, name);
    CUfunction f;
    CUresult r;
    const char *call = "cuModuleGetFunction";
    if (m->library) { /* the library's kernel, then its function on this device */
        CUkernel kernel;
        call = "cuLibraryGetKernel";
        r = ctx->drv->cuLibraryGetKernel(&kernel, asyncrt__library_handle(m->library), lowered ? lowered : name);
        if (r == CUDA_SUCCESS) {
            call = "cuKernelGetFunction";
            r = ctx->drv->cuKernelGetFunction(&f, kernel);
        }
    } else {
        r = ctx->drv->cuModuleGetFunction(&f, m->handle, lowered ? lowered : name);
    }
    if (r == CUDA_ERROR_NOT_FOUND)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NOT_FOUND,
                            "no kernel '%s' in the module: give an extern \"C\" __global__ name, or "
                            "register a C++ name such as \"scale<float>\" as a name expression when "
                            "compiling", name);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, call, "kernel '%s' on device %d", name,
                                ctx->info.ordinal);
    asyncrt_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) {
        free(k);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    k->module = m;
    k->function = f;
    k->raised_shared = 0; /* static + dynamic above 48 KiB needs the opt-in: known at the first launch */
    k->next = m->kernels;
    m->kernels = k;
    *out = k;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_module_get_kernel(asyncrt_module *m, const char *name, asyncrt_kernel **out)
{
    asyncrt__enter(m->ctx);
    return asyncrt__leave(m->ctx, module_get_kernel(m, name, out));
}

void *asyncrt_kernel_function(const asyncrt_kernel *k) { return k->function; }

/* Reads the parameter list once; the driver answers INVALID_VALUE past the
 * last parameter, which is how the count is found. */
static asyncrt_status read_params(asyncrt_kernel *k)
{
    asyncrt_context *ctx = k->module->ctx;
    if (k->params_read) return ASYNCRT_SUCCESS;
    if (!ctx->drv->cuFuncGetParamInfo)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "the driver (CUDA %d) lacks cuFuncGetParamInfo (CUDA 12.4+)",
                            ctx->drv->version);
    size_t count = 0, cap = 0, *sizes = NULL;
    for (;; count++) {
        size_t offset, size;
        CUresult r = ctx->drv->cuFuncGetParamInfo(k->function, count, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        if (r != CUDA_SUCCESS) {
            free(sizes);
            return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuFuncGetParamInfo",
                                   "kernel '%s' parameter %zu", k->name, count);
        }
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            size_t *grown = realloc(sizes, cap * sizeof *sizes);
            if (!grown) {
                free(sizes);
                return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
            }
            sizes = grown;
        }
        sizes[count] = size;
    }
    k->param_sizes = sizes;
    k->param_count = count;
    k->params_read = true;
    return ASYNCRT_SUCCESS;
}

static asyncrt_status kernel_param_sizes(asyncrt_kernel *k, size_t *sizes, size_t capacity,
                                         size_t *count)
{
    *count = 0;
    ASYNCRT_TRY(read_params(k));
    for (size_t i = 0; i < k->param_count && i < capacity; i++) sizes[i] = k->param_sizes[i];
    *count = k->param_count;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_kernel_param_sizes(asyncrt_kernel *k, size_t *sizes, size_t capacity,
                                          size_t *count)
{
    asyncrt__enter(k->module->ctx);
    return asyncrt__leave(k->module->ctx, kernel_param_sizes(k, sizes, capacity, count));
}

/* An observer, as asyncrt_context_cache_stats: the last error is left alone unless it fails. */
asyncrt_status asyncrt_kernel_resources_of(const asyncrt_kernel *k, asyncrt_kernel_resources *out)
{
    static const CUfunction_attribute which[] = {CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    asyncrt_kernel_resources full = ASYNCRT_KERNEL_RESOURCES_INIT;
    int *to[] = {&full.registers, &full.static_shared_bytes, &full.local_bytes, &full.max_threads};
    const asyncrt_driver *drv = k->module->ctx->drv; /* loaded: the kernel's module is */
    for (size_t i = 0; i < 4; i++)
        if (drv->cuFuncGetAttribute(to[i], which[i], k->function) != CUDA_SUCCESS) *to[i] = -1;
    return asyncrt__sized_give(k->module->ctx, ASYNCRT_SIZED_KERNEL_RESOURCES, out, &full, "kernel resources");
}

static void format_sizes(char *buf, size_t size, const size_t *sizes, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%zu", i ? ", " : "", sizes[i]);
}

static asyncrt_status check_arguments(asyncrt_kernel *k, const size_t *arg_sizes, size_t arg_count)
{
    asyncrt_context *ctx = k->module->ctx;
    asyncrt_status s = read_params(k);
    if (s == ASYNCRT_ERROR_UNSUPPORTED) return ASYNCRT_SUCCESS; /* nothing to check against */
    if (s != ASYNCRT_SUCCESS) return s;
    bool same = k->param_count == arg_count;
    for (size_t i = 0; same && i < arg_count; i++) same = k->param_sizes[i] == arg_sizes[i];
    if (same) return ASYNCRT_SUCCESS;
    char want[1024], got[1024];
    format_sizes(want, sizeof want, k->param_sizes, k->param_count);
    format_sizes(got, sizeof got, arg_sizes, arg_count);
    return asyncrt__fail(ctx, ASYNCRT_ERROR_ARGUMENT_MISMATCH,
                        "kernel '%s' takes %zu parameter%s of sizes (%s) bytes; %zu argument%s "
                        "given of sizes (%s) bytes", k->name, k->param_count,
                        k->param_count == 1 ? "" : "s", want, arg_count, arg_count == 1 ? "" : "s", got);
}

/* Static + dynamic shared memory above 48 KiB needs an opt-in per function. */
static asyncrt_status prepare_shared(asyncrt_kernel *k, size_t dynamic)
{
    asyncrt_context *ctx = k->module->ctx;
    if (dynamic <= k->raised_shared) return ASYNCRT_SUCCESS;
    int static_bytes = 0;
    CUresult r = ctx->drv->cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuFuncGetAttribute", "kernel '%s'", k->name);
    size_t optin = (size_t)ctx->info.shared_memory_per_block_optin;
    if (dynamic + (size_t)static_bytes > optin)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT,
                            "kernel '%s' asks for %zu bytes of dynamic shared memory (+ %d static) "
                            "but device %d allows at most %zu bytes per block",
                            k->name, dynamic, static_bytes, ctx->info.ordinal, optin);
    r = ctx->drv->cuFuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)dynamic);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, r, "cuFuncSetAttribute",
                               "raising kernel '%s' to %zu bytes of dynamic shared memory", k->name, dynamic);
    k->raised_shared = dynamic;
    return ASYNCRT_SUCCESS;
}

static asyncrt_status kernel_launch(asyncrt_kernel *k, const asyncrt_launch_config *config, void **args,
                                    const size_t *arg_sizes, size_t arg_count)
{
    asyncrt_context *ctx = k->module->ctx;
    asyncrt_launch_config full; /* the caller's, read by its size */
    ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_LAUNCH_CONFIG, config, &full, "launch config"));
    const asyncrt_launch_config *c = &full;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    /* first: a lazy kernel's attribute queries below would load it */
    ASYNCRT_TRY(asyncrt__capture_check_launch(ctx, (CUstream)c->stream, k->function, k->launched, k->name));
    unsigned grid[3], block[3];
    for (int i = 0; i < 3; i++) {
        grid[i] = c->grid[i] ? c->grid[i] : (i ? 1 : 0);
        block[i] = c->block[i] ? c->block[i] : (i ? 1 : 0);
    }
    if (!grid[0] || !block[0])
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "launch of '%s': grid.x (%u) and block.x (%u) must be at least 1",
                            k->name, c->grid[0], c->block[0]);
    unsigned long long threads = asyncrt__product3(block[0], block[1], block[2]);
    if (threads > (unsigned long long)ctx->info.max_threads_per_block) {
        char count[32] = "more than 2^64"; /* the product of three 32-bit sizes can overflow */
        if (threads != ~0ull) snprintf(count, sizeof count, "%llu", threads);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT,
                            "launch of '%s': block %ux%ux%u = %s threads, above the device's %d",
                            k->name, block[0], block[1], block[2], count, ctx->info.max_threads_per_block);
    }
    if (arg_sizes) ASYNCRT_TRY(check_arguments(k, arg_sizes, arg_count));
    ASYNCRT_TRY(prepare_shared(k, c->shared_bytes));

    CUlaunchAttribute attrs[ASYNCRT_LAUNCH_MAX_ATTRS];
    CUlaunchConfig cfg;
    ASYNCRT_TRY(asyncrt__launch_prepare(ctx, k->function, k->name, c, grid, block, &cfg, attrs));
    CUresult r = ctx->drv->cuLaunchKernelEx(&cfg, k->function, args, NULL);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_LAUNCH, r, "cuLaunchKernelEx",
                               "kernel '%s', grid %ux%ux%u, block %ux%ux%u, %zu bytes dynamic shared memory",
                               k->name, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                               c->shared_bytes);
    k->launched = true;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_kernel_launch(asyncrt_kernel *k, const asyncrt_launch_config *c, void **args,
                                     const size_t *arg_sizes, size_t arg_count)
{
    asyncrt__enter(k->module->ctx);
    asyncrt__range_push(ASYNCRT_RANGE_LAUNCH, "launch %s", k->name);
    asyncrt_status s = kernel_launch(k, c, args, arg_sizes, arg_count);
    asyncrt__range_pop();
    return asyncrt__leave(k->module->ctx, s);
}
