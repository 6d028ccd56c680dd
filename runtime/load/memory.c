/* Device memory, streams and event timers: the little a test or tool needs. */
#include <stdlib.h>

#include "context.h"

struct asyncrt_timer {
    asyncrt_context *ctx;
    CUevent start, stop;
};

#define DEVICE_CALL(ctx, status, call, ...)                                        \
    do {                                                                           \
        asyncrt_status s_ = asyncrt__require_device(ctx);                           \
        if (s_ != ASYNCRT_SUCCESS) return s_;                                      \
        CUresult r_ = (ctx)->drv->call;                                            \
        if (r_ != CUDA_SUCCESS)                                                    \
            return asyncrt__fail_cu(ctx, status, r_, #call, __VA_ARGS__);           \
        return ASYNCRT_SUCCESS;                                                    \
    } while (0)

static asyncrt_status memory_alloc(asyncrt_context *ctx, size_t bytes, asyncrt_deviceptr *out)
{
    *out = 0;
    CUdeviceptr p = 0;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    CUresult r = ctx->drv->cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuMemAlloc", "%zu bytes", bytes);
    *out = (asyncrt_deviceptr)p;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_memory_alloc(asyncrt_context *ctx, size_t bytes, asyncrt_deviceptr *out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_alloc(ctx, bytes, out));
}

static asyncrt_status memory_free(asyncrt_context *ctx, asyncrt_deviceptr ptr)
{
    if (!ptr) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuMemFree((CUdeviceptr)ptr), "0x%llx", (unsigned long long)ptr);
}

asyncrt_status asyncrt_memory_free(asyncrt_context *ctx, asyncrt_deviceptr ptr)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_free(ctx, ptr));
}

static asyncrt_status memory_to_device(asyncrt_context *ctx, asyncrt_deviceptr dst, const void *src, size_t bytes)
{
    if (!bytes) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuMemcpyHtoD((CUdeviceptr)dst, src, bytes), "%zu bytes", bytes);
}

asyncrt_status asyncrt_memory_to_device(asyncrt_context *ctx, asyncrt_deviceptr dst, const void *src, size_t bytes)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_to_device(ctx, dst, src, bytes));
}

static asyncrt_status memory_to_host(asyncrt_context *ctx, void *dst, asyncrt_deviceptr src, size_t bytes)
{
    if (!bytes) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes), "%zu bytes", bytes);
}

asyncrt_status asyncrt_memory_to_host(asyncrt_context *ctx, void *dst, asyncrt_deviceptr src, size_t bytes)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_to_host(ctx, dst, src, bytes));
}

static asyncrt_status memory_copy(asyncrt_context *ctx, asyncrt_deviceptr dst, asyncrt_deviceptr src,
                                  size_t bytes, asyncrt_stream stream)
{
    if (!bytes) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER,
                cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, (CUstream)stream),
                "%zu bytes", bytes);
}

asyncrt_status asyncrt_memory_copy(asyncrt_context *ctx, asyncrt_deviceptr dst, asyncrt_deviceptr src,
                                   size_t bytes, asyncrt_stream stream)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_copy(ctx, dst, src, bytes, stream));
}

static asyncrt_status memory_fill(asyncrt_context *ctx, asyncrt_deviceptr dst, uint8_t byte,
                                  size_t bytes, asyncrt_stream stream)
{
    if (!bytes) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuMemsetD8Async((CUdeviceptr)dst, byte, bytes, (CUstream)stream),
                "%zu bytes", bytes);
}

asyncrt_status asyncrt_memory_fill(asyncrt_context *ctx, asyncrt_deviceptr dst, uint8_t byte,
                                   size_t bytes, asyncrt_stream stream)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, memory_fill(ctx, dst, byte, bytes, stream));
}

static asyncrt_status synchronize(asyncrt_context *ctx)
{
    DEVICE_CALL(ctx, ASYNCRT_ERROR_LAUNCH, cuCtxSynchronize(), "a kernel or copy on device %d failed",
                ctx->info.ordinal);
}

asyncrt_status asyncrt_synchronize(asyncrt_context *ctx)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, synchronize(ctx));
}

static asyncrt_status stream_create(asyncrt_context *ctx, asyncrt_stream *out)
{
    *out = NULL;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuStreamCreate((CUstream *)out, CU_STREAM_NON_BLOCKING), "%s", "");
}

asyncrt_status asyncrt_stream_create(asyncrt_context *ctx, asyncrt_stream *out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, stream_create(ctx, out));
}

static asyncrt_status stream_destroy(asyncrt_context *ctx, asyncrt_stream stream)
{
    if (!stream) return ASYNCRT_SUCCESS;
    DEVICE_CALL(ctx, ASYNCRT_ERROR_DRIVER, cuStreamDestroy((CUstream)stream), "%s", "");
}

asyncrt_status asyncrt_stream_destroy(asyncrt_context *ctx, asyncrt_stream stream)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, stream_destroy(ctx, stream));
}

static asyncrt_status stream_synchronize(asyncrt_context *ctx, asyncrt_stream stream)
{
    DEVICE_CALL(ctx, ASYNCRT_ERROR_LAUNCH, cuStreamSynchronize((CUstream)stream),
                "a kernel or copy on device %d failed", ctx->info.ordinal);
}

asyncrt_status asyncrt_stream_synchronize(asyncrt_context *ctx, asyncrt_stream stream)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, stream_synchronize(ctx, stream));
}

static asyncrt_status new_timer(asyncrt_context *ctx, asyncrt_timer **out)
{
    *out = NULL;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    asyncrt_timer *t = calloc(1, sizeof *t);
    if (!t) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    t->ctx = ctx;
    CUresult r = ctx->drv->cuEventCreate(&t->start, CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = ctx->drv->cuEventCreate(&t->stop, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
        asyncrt_timer_destroy(t);
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuEventCreate", "%s", "");
    }
    *out = t;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_timer_create(asyncrt_context *ctx, asyncrt_timer **out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, new_timer(ctx, out));
}

void asyncrt_timer_destroy(asyncrt_timer *t)
{
    if (!t) return;
    if (asyncrt__require_device(t->ctx) == ASYNCRT_SUCCESS) {
        if (t->start) t->ctx->drv->cuEventDestroy(t->start);
        if (t->stop) t->ctx->drv->cuEventDestroy(t->stop);
    }
    free(t);
}

static asyncrt_status timer_start(asyncrt_timer *t, asyncrt_stream stream)
{
    DEVICE_CALL(t->ctx, ASYNCRT_ERROR_DRIVER, cuEventRecord(t->start, (CUstream)stream), "%s", "start");
}

asyncrt_status asyncrt_timer_start(asyncrt_timer *t, asyncrt_stream stream)
{
    asyncrt__enter(t->ctx);
    return asyncrt__leave(t->ctx, timer_start(t, stream));
}

static asyncrt_status timer_stop(asyncrt_timer *t, asyncrt_stream stream)
{
    DEVICE_CALL(t->ctx, ASYNCRT_ERROR_DRIVER, cuEventRecord(t->stop, (CUstream)stream), "%s", "stop");
}

asyncrt_status asyncrt_timer_stop(asyncrt_timer *t, asyncrt_stream stream)
{
    asyncrt__enter(t->ctx);
    return asyncrt__leave(t->ctx, timer_stop(t, stream));
}

static asyncrt_status timer_elapsed_ms(asyncrt_timer *t, float *ms)
{
    *ms = 0;
    ASYNCRT_TRY(asyncrt__require_device(t->ctx));
    CUresult r = t->ctx->drv->cuEventSynchronize(t->stop);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(t->ctx, ASYNCRT_ERROR_LAUNCH, r, "cuEventSynchronize", "%s",
                               "the timed work failed");
    DEVICE_CALL(t->ctx, ASYNCRT_ERROR_DRIVER, cuEventElapsedTime(ms, t->start, t->stop), "%s", "");
}

asyncrt_status asyncrt_timer_elapsed_ms(asyncrt_timer *t, float *ms)
{
    asyncrt__enter(t->ctx);
    return asyncrt__leave(t->ctx, timer_elapsed_ms(t, ms));
}
