/* Opening the context's device, here or on another thread
 * (asyncrt_context_open_device_async): the opening's state is its own
 * (ctx->opening); the opened device's facts land in the context. */
#include "context.h"

#include <stdlib.h>

#include "speculate.h"

static void settle(asyncrt_context *ctx);
static void reset_async_open(asyncrt_context *ctx);

bool asyncrt__opening_init(asyncrt_context *ctx)
{
    atomic_init(&ctx->opening.state, ASYNCRT_DEVICE_CLOSED);
    return pthread_mutex_init(&ctx->opening.lock, NULL) == 0;
}

void asyncrt__opening_done(asyncrt_context *ctx)
{
    settle(ctx);
    free(ctx->opening.error);
    ctx->opening.error = NULL;
    pthread_mutex_destroy(&ctx->opening.lock);
}

static asyncrt_status open_device_body(asyncrt_context *ctx, int ordinal)
{
    if (ctx->device_open)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "device %d is already open on this context; create another context "
                            "for device %d", ctx->info.ordinal, ordinal);
    asyncrt_device_info info = ASYNCRT_DEVICE_INFO_INIT;
    ASYNCRT_TRY(asyncrt_device_probe(ctx, ordinal, &info));
    CUresult r = ctx->drv->cuDeviceGet(&ctx->device, ordinal);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_NO_DEVICE, r, "cuDeviceGet", "device %d", ordinal);
    r = ctx->drv->cuDevicePrimaryCtxRetain(&ctx->cu_context, ctx->device);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDevicePrimaryCtxRetain",
                               "device %d", ordinal);
    ctx->device_open = true;
    ctx->info = info;
    asyncrt__log(ctx, 1, "device %d: %s, compute capability %d.%d, %d SMs", ordinal, info.name,
                info.cc_major, info.cc_minor, info.sm_count);
    CUresult current = ctx->drv->cuCtxSetCurrent(ctx->cu_context);
    if (current != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, current, "cuCtxSetCurrent", "device %d",
                               ordinal);
    asyncrt__speculation_record(ctx);
    return ASYNCRT_SUCCESS;
}

static asyncrt_status open_device(asyncrt_context *ctx, int ordinal)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, open_device_body(ctx, ordinal));
}

asyncrt_status asyncrt_context_open_device(asyncrt_context *ctx, int ordinal)
{
    reset_async_open(ctx);
    return open_device(ctx, ordinal);
}

/* ---- opening the device on another thread -------------------------------- */

typedef struct open_request {
    asyncrt_context *ctx;
    int ordinal;
} open_request;

static void *open_thread(void *arg)
{
    open_request *req = arg;
    asyncrt_context *ctx = req->ctx;
    ctx->opening.status = open_device(ctx, req->ordinal);
    if (ctx->opening.status != ASYNCRT_SUCCESS) ctx->opening.error = asyncrt__diag_error_copy(&ctx->diag);
    asyncrt__diag_error_forget(&ctx->diag);
    free(req);
    return NULL;
}

asyncrt_status asyncrt_context_open_device_async(asyncrt_context *ctx, int ordinal)
{
    reset_async_open(ctx);
    if (ctx->device_open)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "device %d is already open on this context; create another context "
                            "for device %d", ctx->info.ordinal, ordinal);
    open_request *req = malloc(sizeof *req);
    if (!req) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    *req = (open_request){ctx, ordinal};
    ctx->opening.ordinal = ordinal;
    atomic_store(&ctx->opening.state, ASYNCRT_DEVICE_OPENING);
    if (pthread_create(&ctx->opening.thread, NULL, open_thread, req) != 0) {
        /* No thread to spare: open here, which is only slower. */
        free(req);
        atomic_store(&ctx->opening.state, ASYNCRT_DEVICE_CLOSED);
        return open_device(ctx, ordinal);
    }
    return ASYNCRT_SUCCESS;
}

bool asyncrt__device_pending(const asyncrt_context *ctx)
{
    return atomic_load(&ctx->opening.state) == ASYNCRT_DEVICE_OPENING;
}

/* Joins the opener thread if there is one; afterwards the state is final. */
static void settle(asyncrt_context *ctx)
{
    if (atomic_load(&ctx->opening.state) != ASYNCRT_DEVICE_OPENING) return;
    pthread_mutex_lock(&ctx->opening.lock);
    if (atomic_load(&ctx->opening.state) == ASYNCRT_DEVICE_OPENING) {
        pthread_join(ctx->opening.thread, NULL);
        atomic_store(&ctx->opening.state, ASYNCRT_DEVICE_SETTLED);
    }
    pthread_mutex_unlock(&ctx->opening.lock);
}

asyncrt_status asyncrt__wait_device(asyncrt_context *ctx)
{
    settle(ctx);
    /* A failed asynchronous open is every later caller's answer, until an
     * open_device call tries again. */
    if (atomic_load(&ctx->opening.state) == ASYNCRT_DEVICE_SETTLED && ctx->opening.status != ASYNCRT_SUCCESS)
        return asyncrt__fail(ctx, ctx->opening.status, "opening the device failed: %s",
                            ctx->opening.error ? ctx->opening.error : "");
    return ASYNCRT_SUCCESS;
}

/* Before another open: forget an earlier asynchronous attempt. */
static void reset_async_open(asyncrt_context *ctx)
{
    settle(ctx);
    atomic_store(&ctx->opening.state, ASYNCRT_DEVICE_CLOSED);
    ctx->opening.status = ASYNCRT_SUCCESS;
    free(ctx->opening.error);
    ctx->opening.error = NULL;
}

asyncrt_status asyncrt_context_wait_device(asyncrt_context *ctx)
{
    return asyncrt__wait_device(ctx);
}
