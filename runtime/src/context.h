/* The context's insides, shared by the runtime's files (not installed). */
#ifndef ASYNCRT_CONTEXT_INTERNAL_H
#define ASYNCRT_CONTEXT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "asyncrt/runtime.h"
#include "diag.h"
#include "driver.h"
#include "nvrtc_loader.h"
#include "try.h"

typedef struct asyncrt_cache asyncrt_cache;                   /* cache.c */
typedef struct asyncrt_error_slot asyncrt_error_slot;         /* context.c */
typedef struct asyncrt_inflight asyncrt_inflight;             /* context.c */
typedef struct asyncrt_pch asyncrt_pch;                       /* pch.c */
typedef struct asyncrt_remote asyncrt_remote;                 /* remote_cache.c */

/* Where asyncrt_context_open_device_async stands (ctx->device_state). */
enum { ASYNCRT_DEVICE_CLOSED = 0, ASYNCRT_DEVICE_OPENING, ASYNCRT_DEVICE_SETTLED };

struct asyncrt_context {
    const asyncrt_driver *drv;       /* NULL until the driver is needed */
    int log_level;
    char *cache_dir;                 /* NULL: no disk cache */
    bool memory_cache;               /* ASYNCRT_CACHE=0 turns both caches off */
    asyncrt_cache *cache;            /* the in-process cache, counters, directory state */
    asyncrt_pch *pch;                /* NVRTC's precompiled headers, checked (ASYNCRT_PCH) */
    asyncrt_remote *remote;          /* the shared remote cache, NULL when none (remote_cache.h) */
    bool device_open;
    CUdevice device;
    CUcontext cu_context;            /* the device's retained primary context */
    asyncrt_device_info info;
    const char *fault;               /* test seam: a call to fail, see asyncrt__fault_hit */
    atomic_bool worker_reported;     /* a compile worker's problem was logged at level 1 (batch.c) */

    /* ---- threads: see "Threads" in runtime.h ---------------------------- */
    pthread_mutex_t lock;            /* guards drv's first load, errors, inflight */
    asyncrt_error_slot *errors;      /* one last-error message per thread */
    asyncrt_inflight *inflight;      /* cache keys being compiled right now */
    pthread_cond_t inflight_done;    /* signalled when one of them finishes */
    /* open_device_async: a thread opens the device; the first caller that
     * needs it joins that thread under open_lock, then marks it settled. */
    atomic_int device_state;
    pthread_mutex_t open_lock;
    pthread_t opener;
    int open_ordinal;                /* the device being opened */
    asyncrt_status open_status;      /* the opener's result */
    char *open_error;                /* and its message, for the joining thread */
};

/* Test seam for calls that do not go through the driver table (NVRTC): true
 * when the tests asked this context to fail `call`. Driver calls are failed by
 * swapping an entry of a copy of ctx->drv instead. */
static inline bool asyncrt__fault_hit(const asyncrt_context *ctx, const char *call)
{
    return ctx->fault && __builtin_strcmp(ctx->fault, call) == 0;
}

/* Loads the driver into ctx->drv if needed (loaders.c). */
asyncrt_status asyncrt__require_driver(asyncrt_context *ctx);

/* The process's NVRTC, opened on first need; NO_NVRTC (with where it looked) if none. */
asyncrt_status asyncrt__require_nvrtc(asyncrt_context *ctx, const asyncrt_nvrtc **out);

/* Fails unless a device is open; makes its context current for this thread. */
asyncrt_status asyncrt__require_device(asyncrt_context *ctx);

/* Waits for an asynchronous device open to finish (no-op otherwise). Returns
 * its failure, with its message, in the calling thread's last error. */
asyncrt_status asyncrt__wait_device(asyncrt_context *ctx);

/* True while asyncrt_context_open_device_async has not been waited for. */
bool asyncrt__device_pending(const asyncrt_context *ctx);

/* Single flight per cache key: enter waits while another thread of this
 * context compiles the same key, so a duplicate finds the first one's result
 * in the cache instead of running NVRTC again. Every enter needs a leave. */
void asyncrt__inflight_enter(asyncrt_context *ctx, const uint8_t key[32]);
void asyncrt__inflight_leave(asyncrt_context *ctx, const uint8_t key[32]);

#endif
