/* The peer matrix. The driver's answers per ordered pair of devices, then a
 * copy of PEER_BYTES from src to dst with cuMemcpyPeerAsync on a stream of
 * src's primary context (peer access enabled both ways where the driver
 * allows it), timed with events: PEER_WARMUP untimed, the median of
 * PEER_RUNS. The driver is called beside the library, through
 * asyncrt_context_driver_proc: the library keeps no peer state. */
#include "peers.h"

#include "devices.h" /* exit codes */

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEER_BYTES ((size_t)64 << 20)
#define PEER_WARMUP 3
#define PEER_RUNS 9

#define PEER_FUNCTIONS(X)                                                                                    \
    X(cuGetErrorName, 6000) X(cuDeviceGet, 2000) X(cuDeviceCanAccessPeer, 4000) X(cuDeviceGetP2PAttribute, 8000) \
    X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxSetCurrent, 4000)           \
    X(cuCtxEnablePeerAccess, 4000) X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuStreamCreate, 2000)             \
    X(cuStreamDestroy, 4000) X(cuEventCreate, 2000) X(cuEventDestroy, 4000) X(cuEventRecord, 2000)            \
    X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000) X(cuMemcpyPeerAsync, 4000)

typedef struct peer_driver {
#define PEER_FIELD(name, ver) PFN_##name##_v##ver name;
    PEER_FUNCTIONS(PEER_FIELD)
#undef PEER_FIELD
} peer_driver;

static bool resolve(asyncrt_context *ctx, peer_driver *d, char *why, size_t size)
{
#define PEER_RESOLVE(name, ver)                                                                             \
    if (asyncrt_context_driver_proc(ctx, #name, ver, (void **)&d->name) != ASYNCRT_SUCCESS) {              \
        snprintf(why, size, "%s", asyncrt_context_last_error(ctx));                                        \
        return false;                                                                                       \
    }
    PEER_FUNCTIONS(PEER_RESOLVE)
#undef PEER_RESOLVE
    return true;
}

/* Records the first failure as "call: CUDA_ERROR_..." and says whether r was a success. */
static bool ok(const peer_driver *d, CUresult r, const char *call, probe_peer *p)
{
    if (r == CUDA_SUCCESS) return true;
    if (!p->error[0]) {
        const char *name = NULL;
        if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
        snprintf(p->error, sizeof p->error, "%s failed: %s", call, name ? name : "unknown CUresult");
    }
    return false;
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void enable_peer(const peer_driver *d, CUcontext from, CUcontext to, probe_peer *p)
{
    CUresult r = d->cuCtxSetCurrent(from);
    if (r == CUDA_SUCCESS) r = d->cuCtxEnablePeerAccess(to, 0);
    if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) ok(d, r, "cuCtxEnablePeerAccess", p);
}

/* The timed copies, on src's stream; every handle made here is freed here. */
static void measure(const peer_driver *d, CUcontext src, CUcontext dst, probe_peer *p)
{
    CUdeviceptr from = 0, to = 0;
    CUstream stream = NULL;
    CUevent start = NULL, stop = NULL;
    float ms[PEER_RUNS];
    bool fine = ok(d, d->cuCtxSetCurrent(dst), "cuCtxSetCurrent", p) && ok(d, d->cuMemAlloc(&to, PEER_BYTES), "cuMemAlloc", p) &&
                ok(d, d->cuCtxSetCurrent(src), "cuCtxSetCurrent", p) &&
                ok(d, d->cuMemAlloc(&from, PEER_BYTES), "cuMemAlloc", p) &&
                ok(d, d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", p) &&
                ok(d, d->cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate", p) &&
                ok(d, d->cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate", p);
    for (int i = 0; fine && i < PEER_WARMUP; i++)
        fine = ok(d, d->cuMemcpyPeerAsync(to, dst, from, src, PEER_BYTES, stream), "cuMemcpyPeerAsync", p);
    for (int i = 0; fine && i < PEER_RUNS; i++)
        fine = ok(d, d->cuEventRecord(start, stream), "cuEventRecord", p) &&
               ok(d, d->cuMemcpyPeerAsync(to, dst, from, src, PEER_BYTES, stream), "cuMemcpyPeerAsync", p) &&
               ok(d, d->cuEventRecord(stop, stream), "cuEventRecord", p) &&
               ok(d, d->cuEventSynchronize(stop), "cuEventSynchronize", p) &&
               ok(d, d->cuEventElapsedTime(&ms[i], start, stop), "cuEventElapsedTime", p);
    if (fine) {
        qsort(ms, PEER_RUNS, sizeof ms[0], compare_float);
        float median = ms[PEER_RUNS / 2];
        p->measured = median > 0;
        p->copy_gbs = p->measured ? (double)PEER_BYTES / (median * 1e-3) / 1e9 : 0;
        p->copy_bytes = PEER_BYTES;
        p->copy_runs = PEER_RUNS;
        if (!p->measured) snprintf(p->error, sizeof p->error, "the copies took no measurable time");
    }
    d->cuCtxSetCurrent(src);
    if (stop) d->cuEventDestroy(stop);
    if (start) d->cuEventDestroy(start);
    if (stream) d->cuStreamDestroy(stream);
    if (from) d->cuMemFree(from);
    d->cuCtxSetCurrent(dst);
    if (to) d->cuMemFree(to);
}

static void probe_pair(const peer_driver *d, probe_peer *p)
{
    CUdevice src, dst;
    if (!ok(d, d->cuDeviceGet(&src, p->src), "cuDeviceGet", p) || !ok(d, d->cuDeviceGet(&dst, p->dst), "cuDeviceGet", p))
        return;
    if (!ok(d, d->cuDeviceCanAccessPeer(&p->can_access, src, dst), "cuDeviceCanAccessPeer", p)) p->can_access = -1;
    const struct {
        CUdevice_P2PAttribute attr;
        int *to;
    } attrs[] = {{CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, &p->performance_rank},
                 {CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, &p->access_supported},
                 {CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, &p->native_atomics},
                 {CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, &p->cuda_array_access}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (!ok(d, d->cuDeviceGetP2PAttribute(attrs[i].to, attrs[i].attr, src, dst), "cuDeviceGetP2PAttribute", p))
            *attrs[i].to = -1;
    p->error[0] = '\0'; /* the answers are the matrix; an error from here on is the copy's */
    CUcontext sc = NULL, dc = NULL;
    if (ok(d, d->cuDevicePrimaryCtxRetain(&sc, src), "cuDevicePrimaryCtxRetain", p) &&
        ok(d, d->cuDevicePrimaryCtxRetain(&dc, dst), "cuDevicePrimaryCtxRetain", p)) {
        if (p->can_access == 1) {
            enable_peer(d, sc, dc, p);
            enable_peer(d, dc, sc, p);
        }
        if (!p->error[0]) measure(d, sc, dc, p);
    }
    if (dc) d->cuDevicePrimaryCtxRelease(dst);
    if (sc) d->cuDevicePrimaryCtxRelease(src);
}

int probe_collect_peers(asyncrt_context *ctx, probe_report *r)
{
    if (r->device_count < 2) return PROBE_EXIT_OK;
    size_t n = r->device_count * (r->device_count - 1);
    if (!(r->peers = calloc(n, sizeof *r->peers))) {
        fprintf(stderr, "asyncrt-probe: out of memory\n");
        return PROBE_EXIT_INTERNAL;
    }
    peer_driver d;
    char why[sizeof r->peers[0].error] = ""; /* each pair's error holds it whole */
    bool have = resolve(ctx, &d, why, sizeof why);
    for (size_t i = 0; i < r->device_count; i++)
        for (size_t j = 0; j < r->device_count; j++) {
            if (i == j) continue;
            probe_peer *p = &r->peers[r->peer_count++];
            *p = (probe_peer){.src = r->devices[i].info.ordinal, .dst = r->devices[j].info.ordinal, .can_access = -1,
                              .performance_rank = -1, .access_supported = -1, .native_atomics = -1,
                              .cuda_array_access = -1};
            if (have) probe_pair(&d, p);
            else snprintf(p->error, sizeof p->error, "%s", why);
        }
    return PROBE_EXIT_OK;
}
