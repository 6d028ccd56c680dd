/* CUDA graphs without surprises: stream capture through the library, and the
 * refusals that keep a capture valid. A module load while any stream captures
 * in global mode fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidates that capture; so does the lazy load of a function at its first
 * launch (CUDA_MODULE_LOADING=LAZY, the default). Both are refused here
 * first, with ASYNCRT_ERROR_CAPTURE, and the capture stays usable. */
#include "capture.h"

#include <stdlib.h>

#include "asyncrt/graph.h"

#define HOW_TO_LOAD_FIRST                                                                           \
    "load it before the capture begins: build or load the module and call "                       \
    "asyncrt_module_make_resident on it (a built-in op: create it before the capture, which loads it); " \
    "the capture is still valid"

/* The stream's capture status; NONE where the driver cannot say (no
 * cuStreamGetCaptureInfo, or it fails): then nothing is refused and the
 * driver has the last word. */
static CUstreamCaptureStatus capture_status(asyncrt_context *ctx, CUstream stream)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!ctx->drv->cuStreamGetCaptureInfo) return status;
    if (ctx->drv->cuStreamGetCaptureInfo(stream, &status, NULL, NULL, NULL, NULL, NULL) != CUDA_SUCCESS)
        return CU_STREAM_CAPTURE_STATUS_NONE;
    return status;
}

asyncrt_status asyncrt__capture_refuse(asyncrt_context *ctx, const char *what, const char *name)
{
    CUstream streams[8];
    pthread_mutex_lock(&ctx->lock);
    int count = ctx->capturing_count;
    for (int i = 0; i < count; i++) streams[i] = ctx->capturing[i];
    pthread_mutex_unlock(&ctx->lock);
    for (int i = 0; i < count; i++)
        if (capture_status(ctx, streams[i]) == CU_STREAM_CAPTURE_STATUS_ACTIVE)
            return asyncrt__fail(ctx, ASYNCRT_ERROR_CAPTURE,
                                "%s '%s' refused: stream %p is capturing a CUDA graph, and a module "
                                "load now would invalidate the capture; %s", what, name ? name : "kernel.cu",
                                (void *)streams[i], HOW_TO_LOAD_FIRST);
    return ASYNCRT_SUCCESS;
}

static bool loads_lazily(asyncrt_context *ctx)
{
    CUmoduleLoadingMode mode = CU_MODULE_LAZY_LOADING; /* unknown: assume the default */
    if (ctx->drv->cuModuleGetLoadingMode && ctx->drv->cuModuleGetLoadingMode(&mode) != CUDA_SUCCESS)
        mode = CU_MODULE_LAZY_LOADING;
    return mode == CU_MODULE_LAZY_LOADING;
}

asyncrt_status asyncrt__capture_check_launch(asyncrt_context *ctx, CUstream stream, CUfunction function,
                                             bool launched, const char *name)
{
    if (capture_status(ctx, stream) != CU_STREAM_CAPTURE_STATUS_ACTIVE) return ASYNCRT_SUCCESS;
    bool loaded = launched || !loads_lazily(ctx);
    CUfunctionLoadingState state;
    if (!loaded && ctx->drv->cuFuncIsLoaded && ctx->drv->cuFuncIsLoaded(&state, function) == CUDA_SUCCESS)
        loaded = state == CU_FUNCTION_LOADING_STATE_LOADED;
    if (loaded) return ASYNCRT_SUCCESS;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_CAPTURE,
                        "launch of '%s' refused: stream %p is capturing a CUDA graph and the kernel is not "
                        "loaded on device %d yet (lazy loading, CUDA_MODULE_LOADING=LAZY), so this launch "
                        "would load it inside the capture and invalidate it; %s", name, (void *)stream,
                        ctx->info.ordinal, HOW_TO_LOAD_FIRST);
}

asyncrt_status asyncrt__module_load_functions(asyncrt_context *ctx, CUmodule module, const char *name,
                                              unsigned *loaded)
{
    *loaded = 0;
    if (!loads_lazily(ctx)) return ASYNCRT_SUCCESS; /* eager: the load loaded them all */
    const asyncrt_driver *d = ctx->drv;
    if (!d->cuFuncLoad || !d->cuModuleGetFunctionCount || !d->cuModuleEnumerateFunctions)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "module '%s': the driver (CUDA %d) loads lazily but lacks cuFuncLoad (CUDA 12.4+); "
                            "set CUDA_MODULE_LOADING=EAGER to load every function with its module",
                            name, d->version);
    ASYNCRT_TRY(asyncrt__capture_refuse(ctx, "making resident module", name));
    unsigned count = 0;
    CUresult r = d->cuModuleGetFunctionCount(&count, module);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuModuleGetFunctionCount", "module '%s'", name);
    CUfunction *functions = calloc(count ? count : 1, sizeof *functions);
    if (!functions) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    r = d->cuModuleEnumerateFunctions(functions, count, module);
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (r != CUDA_SUCCESS)
        s = asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuModuleEnumerateFunctions", "module '%s'", name);
    for (unsigned i = 0; s == ASYNCRT_SUCCESS && i < count; i++) {
        r = d->cuFuncLoad(functions[i]);
        if (r != CUDA_SUCCESS)
            s = asyncrt__fail_cu(ctx, ASYNCRT_ERROR_MODULE_LOAD, r, "cuFuncLoad", "function %u of %u of module '%s'",
                                i + 1, count, name);
        else
            ++*loaded;
    }
    free(functions);
    return s;
}

/* ---- the public calls ------------------------------------------------------ */

struct asyncrt_graph {
    asyncrt_context *ctx;
    CUgraph graph;
    CUgraphExec exec;
};

static asyncrt_status require_graphs(asyncrt_context *ctx, const char *call)
{
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    const asyncrt_driver *d = ctx->drv;
    if (!d->cuStreamBeginCapture || !d->cuStreamEndCapture || !d->cuGraphInstantiateWithFlags ||
        !d->cuGraphLaunch || !d->cuGraphExecDestroy || !d->cuGraphDestroy || !d->cuStreamGetCaptureInfo)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "%s: the driver (CUDA %d) lacks stream capture or graph calls (CUDA 12.3+ needed)",
                            call, d->version);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status capture_begin(asyncrt_context *ctx, asyncrt_stream stream)
{
    ASYNCRT_TRY(require_graphs(ctx, "asyncrt_stream_capture_begin"));
    if (!stream)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "asyncrt_stream_capture_begin: the default (NULL) stream cannot be captured; "
                            "capture a stream from asyncrt_stream_create");
    pthread_mutex_lock(&ctx->lock);
    bool full = ctx->capturing_count == (int)(sizeof ctx->capturing / sizeof ctx->capturing[0]);
    if (!full) ctx->capturing[ctx->capturing_count++] = (CUstream)stream;
    pthread_mutex_unlock(&ctx->lock);
    if (full)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT,
                            "asyncrt_stream_capture_begin: %zu streams of this context are capturing already",
                            sizeof ctx->capturing / sizeof ctx->capturing[0]);
    CUresult r = ctx->drv->cuStreamBeginCapture((CUstream)stream, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (r == CUDA_SUCCESS) return ASYNCRT_SUCCESS;
    pthread_mutex_lock(&ctx->lock);
    ctx->capturing_count--; /* its own slot is the last one unless another thread raced: find it */
    for (int i = 0; i <= ctx->capturing_count; i++)
        if (ctx->capturing[i] == (CUstream)stream) {
            ctx->capturing[i] = ctx->capturing[ctx->capturing_count];
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
    return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuStreamBeginCapture", "stream %p", stream);
}

asyncrt_status asyncrt_stream_capture_begin(asyncrt_context *ctx, asyncrt_stream stream)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, capture_begin(ctx, stream));
}

static void unwatch(asyncrt_context *ctx, CUstream stream)
{
    pthread_mutex_lock(&ctx->lock);
    for (int i = 0; i < ctx->capturing_count; i++)
        if (ctx->capturing[i] == stream) {
            ctx->capturing[i] = ctx->capturing[--ctx->capturing_count];
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
}

static asyncrt_status capture_end(asyncrt_context *ctx, asyncrt_stream stream, asyncrt_graph **out)
{
    *out = NULL;
    ASYNCRT_TRY(require_graphs(ctx, "asyncrt_stream_capture_end"));
    CUgraph graph = NULL;
    CUresult r = ctx->drv->cuStreamEndCapture((CUstream)stream, &graph);
    unwatch(ctx, (CUstream)stream);
    if (r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_CAPTURE, r, "cuStreamEndCapture",
                               "stream %p: a call during the capture invalidated it (a module load, a "
                               "synchronisation, or work from another stream); nothing was captured", stream);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuStreamEndCapture", "stream %p", stream);
    asyncrt_graph *g = calloc(1, sizeof *g);
    if (!g) {
        ctx->drv->cuGraphDestroy(graph);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    *g = (asyncrt_graph){.ctx = ctx, .graph = graph};
    /* kernel nodes keep the priority of the stream they were captured from */
    r = ctx->drv->cuGraphInstantiateWithFlags(&g->exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    if (r != CUDA_SUCCESS) {
        asyncrt_graph_destroy(g);
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuGraphInstantiateWithFlags",
                               "the graph captured from stream %p", stream);
    }
    *out = g;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_stream_capture_end(asyncrt_context *ctx, asyncrt_stream stream, asyncrt_graph **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, capture_end(ctx, stream, out));
}

static asyncrt_status graph_launch(asyncrt_graph *g, asyncrt_stream stream)
{
    ASYNCRT_TRY(asyncrt__require_device(g->ctx));
    CUresult r = g->ctx->drv->cuGraphLaunch(g->exec, (CUstream)stream);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(g->ctx, ASYNCRT_ERROR_LAUNCH, r, "cuGraphLaunch", "stream %p", stream);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_graph_launch(asyncrt_graph *graph, asyncrt_stream stream)
{
    asyncrt__enter(graph->ctx);
    return asyncrt__leave(graph->ctx, graph_launch(graph, stream));
}

void asyncrt_graph_destroy(asyncrt_graph *g)
{
    if (!g) return;
    if (asyncrt__require_device(g->ctx) == ASYNCRT_SUCCESS) {
        if (g->exec) g->ctx->drv->cuGraphExecDestroy(g->exec);
        if (g->graph) g->ctx->drv->cuGraphDestroy(g->graph);
    }
    free(g);
}

static asyncrt_status stream_capturing(asyncrt_context *ctx, asyncrt_stream stream, bool *capturing)
{
    *capturing = false;
    ASYNCRT_TRY(require_graphs(ctx, "asyncrt_stream_capturing"));
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = ctx->drv->cuStreamGetCaptureInfo((CUstream)stream, &status, NULL, NULL, NULL, NULL, NULL);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuStreamGetCaptureInfo", "stream %p", stream);
    *capturing = status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_stream_capturing(asyncrt_context *ctx, asyncrt_stream stream, bool *capturing)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, stream_capturing(ctx, stream, capturing));
}
