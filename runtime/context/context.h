/* The context's insides, shared by the runtime's files (not installed). */
#ifndef ASYNCRT_CONTEXT_H
#define ASYNCRT_CONTEXT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include "asyncrt/runtime.h"
#include "context_report.h"
#include "diag.h"
#include "driver.h"
#include "nvrtc_loader.h"
#include "settings.h"
#include "try.h"

typedef struct asyncrt_cache asyncrt_cache;                   /* cache.c */

/* State a layer above the context keeps per context (the compile layer's
 * precompiled headers, its compact images' assembler): made by that layer on its first use, under the
 * context's lock, and freed at destroy through `free`. The context cannot
 * name a layer above it, so it holds the pointer and how to free it. */
typedef struct asyncrt_context_slot {
    void *state;
    void (*free)(void *state);
} asyncrt_context_slot;

/* Where asyncrt_context_open_device_async stands (opening.state). */
enum { ASYNCRT_DEVICE_CLOSED = 0, ASYNCRT_DEVICE_OPENING, ASYNCRT_DEVICE_SETTLED };

/* open_device_async (device_open.c): a thread opens the device; the first
 * caller that needs it joins that thread under lock, then marks it settled. */
typedef struct asyncrt_opening {
    atomic_int state;
    pthread_mutex_t lock;
    pthread_t thread;
    int ordinal;                     /* the device being opened */
    asyncrt_status status;           /* the thread's result */
    char *error;                     /* and its message, for the joining thread */
} asyncrt_opening;

struct asyncrt_context {
    asyncrt_settings settings;       /* the environment, read once at create */
    asyncrt_diag diag;               /* last errors (per thread) and the log level */
    const asyncrt_driver *drv;       /* NULL until the driver is needed */
    asyncrt_cache *cache;            /* the cache and its tiers (memory, disk, remote), counters, claims */
    asyncrt_context_slot pch;        /* NVRTC's precompiled headers (compile/pch.h's asyncrt__pch_of) */
    asyncrt_context_slot compact;    /* compact images' nvPTXCompiler (compile/compact_use.h) */
    bool device_open;
    CUdevice device;
    CUcontext cu_context;            /* the device's retained primary context */
    asyncrt_device_info info;
    const char *fault;               /* test seam: a call to fail, see asyncrt__fault_hit */
    atomic_bool worker_reported;     /* a compile worker's problem was logged at level 1 (build/batch.c) */

    /* ---- threads: see "Threads" in runtime.h ---------------------------- */
    pthread_mutex_t lock;            /* guards drv's first load and the slots' first make */
    asyncrt_opening opening;         /* open_device_async's thread and result */

    /* ---- graphs: streams capturing through asyncrt_stream_capture_begin,
     * under lock; loads ask each of them first (load/capture.c) */
    CUstream capturing[8];
    int capturing_count;
    /* ---- peers (asyncrt_context_create_peer): one cache and library set -- */
    asyncrt_context *root;           /* itself, or the context whose cache a peer shares */
    atomic_int refs;                 /* on the root: itself until destroyed, plus one per live peer */
    asyncrt_context_slot libraries;  /* on the root: images loaded for every device (load/library.c) */
};

/* Test seam for calls that do not go through the driver table (NVRTC): true
 * when the tests asked this context to fail `call`. Driver calls are failed by
 * swapping an entry of a copy of ctx->drv instead. */
static inline bool asyncrt__fault_hit(const asyncrt_context *ctx, const char *call)
{
    return ctx->fault && strcmp(ctx->fault, call) == 0;
}

/* Loads the driver into ctx->drv if needed (loaders.c). */
asyncrt_status asyncrt__require_driver(asyncrt_context *ctx);

/* The process's NVRTC, opened on first need; NO_NVRTC (with where it looked) if none. */
asyncrt_status asyncrt__require_nvrtc(asyncrt_context *ctx, const asyncrt_nvrtc **out);

/* The opening's lifecycle (device_open.c): init at create, done before destroy. */
bool asyncrt__opening_init(asyncrt_context *ctx);
void asyncrt__opening_done(asyncrt_context *ctx);

/* Fails unless a device is open; makes its context current for this thread. */
asyncrt_status asyncrt__require_device(asyncrt_context *ctx);

/* Waits for an asynchronous device open to finish (no-op otherwise). Returns
 * its failure, with its message, in the calling thread's last error. */
asyncrt_status asyncrt__wait_device(asyncrt_context *ctx);

/* True while asyncrt_context_open_device_async has not been waited for. */
bool asyncrt__device_pending(const asyncrt_context *ctx);

/* asyncrt_context_create, as if each variable names[i] (base/settings.h's)
 * had been values[i] (NULL: unset) in the environment: for a context the
 * library makes for itself (the bundle maker's, with no precompiled header
 * and a private cache). OUT_OF_MEMORY, also for a name not in the list. */
asyncrt_status asyncrt__context_create_with(const char *const *names, const char *const *values, size_t count,
                                            asyncrt_context **out);

#endif
