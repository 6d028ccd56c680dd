/* Launch attributes (cooperative, programmatic dependent launch, clusters)
 * with the occupancy checks that turn "cannot be resident" into a message
 * before the launch, and streams with a priority. */
#include "launch_preflight.h"

#include <stdio.h>
#include <string.h>

/* Static shared memory of a function, for messages; -1 if unknown. */
static int static_shared(asyncrt_context *ctx, CUfunction f)
{
    int bytes = -1;
    if (ctx->drv->cuFuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) != CUDA_SUCCESS)
        return -1;
    return bytes;
}

/* Clusters: the device must have them, the grid must tile into them, and at
 * least one must fit on the device. Sets *resident to the most clusters
 * resident at once (cuOccupancyMaxActiveClusters). */
static asyncrt_status check_cluster(asyncrt_context *ctx, CUfunction f, const char *name,
                                    const CUlaunchConfig *cfg, const unsigned cluster[3],
                                    const unsigned grid[3], int *resident)
{
    unsigned long long blocks = asyncrt__product3(cluster[0], cluster[1], cluster[2]);
    if (!ctx->info.cluster_launch)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "launch of '%s': thread block clusters need sm_90+ "
                            "(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH); device %d is compute capability %d.%d",
                            name, ctx->info.ordinal, ctx->info.cc_major, ctx->info.cc_minor);
    for (int i = 0; i < 3; i++)
        if (grid[i] % cluster[i])
            return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                                "launch of '%s': grid %ux%ux%u is not a multiple of cluster %ux%ux%u "
                                "(dimension %c: %u %% %u != 0)", name, grid[0], grid[1], grid[2],
                                cluster[0], cluster[1], cluster[2], "xyz"[i], grid[i], cluster[i]);
    CUresult r;
    if (blocks > 8) { /* above the portable size the function must opt in */
        r = ctx->drv->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (r != CUDA_SUCCESS)
            return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, r, "cuFuncSetAttribute",
                                   "launch of '%s': cluster %ux%ux%u = %llu blocks is above the portable "
                                   "8 and the device refuses non-portable cluster sizes", name,
                                   cluster[0], cluster[1], cluster[2], blocks);
    }
    *resident = 0;
    r = ctx->drv->cuOccupancyMaxActiveClusters(resident, f, cfg);
    unsigned long long threads = asyncrt__product3(cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ);
    if (r == CUDA_SUCCESS && *resident > 0) return ASYNCRT_SUCCESS;
    char what[512];
    snprintf(what, sizeof what,
             "cluster %ux%ux%u = %llu blocks of %llu threads with %u bytes of dynamic shared memory "
             "(+ %d static) per block", cluster[0], cluster[1], cluster[2], blocks, threads,
             cfg->sharedMemBytes, static_shared(ctx, f));
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT, r, "cuOccupancyMaxActiveClusters",
                               "launch of '%s': %s is refused by the device (at most 8 blocks per "
                               "cluster are portable, 16 on the H100 with the non-portable opt-in)",
                               name, what);
    return asyncrt__fail(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT,
                        "launch of '%s': %s cannot be resident on device %d: "
                        "cuOccupancyMaxActiveClusters = 0 (all blocks of a cluster must fit at once on "
                        "the SMs of one GPC: %d threads and %d bytes of shared memory per SM); use "
                        "smaller clusters, fewer threads or less shared memory", name, what,
                        ctx->info.ordinal, ctx->info.max_threads_per_sm, ctx->info.shared_memory_per_sm);
}

/* A cooperative grid must be resident all at once, else its grid.sync()
 * deadlocks; the driver would refuse it with an opaque code. */
static asyncrt_status check_cooperative(asyncrt_context *ctx, CUfunction f, const char *name,
                                        const CUlaunchConfig *cfg, const unsigned cluster[3],
                                        int resident_clusters)
{
    int supported = 0;
    CUresult r = ctx->drv->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                                                ctx->device);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGetAttribute",
                               "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH of device %d", ctx->info.ordinal);
    if (!supported)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "launch of '%s': device %d does not support cooperative launches "
                            "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)", name, ctx->info.ordinal);
    unsigned long long grid = asyncrt__product3(cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ);
    unsigned threads = cfg->blockDimX * cfg->blockDimY * cfg->blockDimZ;
    unsigned long long limit;
    char how[512];
    if (resident_clusters > 0) {
        unsigned long long per = asyncrt__product3(cluster[0], cluster[1], cluster[2]);
        limit = (unsigned long long)resident_clusters * per;
        snprintf(how, sizeof how, "cuOccupancyMaxActiveClusters = %d clusters of %llu blocks",
                 resident_clusters, per);
    } else {
        int per_sm = 0;
        r = ctx->drv->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &per_sm, f, (int)threads, cfg->sharedMemBytes, CU_OCCUPANCY_DEFAULT);
        if (r != CUDA_SUCCESS)
            return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r,
                                   "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                                   "kernel '%s', %u threads, %u bytes of dynamic shared memory", name,
                                   threads, cfg->sharedMemBytes);
        limit = (unsigned long long)per_sm * (unsigned long long)ctx->info.sm_count;
        snprintf(how, sizeof how,
                 "cuOccupancyMaxActiveBlocksPerMultiprocessor = %d blocks per SM of %u threads "
                 "with %u bytes of dynamic shared memory (+ %d static), x %d SMs",
                 per_sm, threads, cfg->sharedMemBytes, static_shared(ctx, f), ctx->info.sm_count);
    }
    if (grid <= limit) return ASYNCRT_SUCCESS;
    return asyncrt__fail(ctx, ASYNCRT_ERROR_RESOURCE_LIMIT,
                        "cooperative launch of '%s': grid %ux%ux%u = %llu blocks, but at most %llu "
                        "can be resident at once on device %d (%s); a grid-synchronising kernel "
                        "needs every block resident: launch at most %llu blocks (e.g. with a "
                        "grid-stride loop)", name, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, grid,
                        limit, ctx->info.ordinal, how, limit);
}

asyncrt_status asyncrt__launch_prepare(asyncrt_context *ctx, CUfunction f, const char *name,
                                      const asyncrt_launch_config *c, const unsigned grid[3],
                                      const unsigned block[3], CUlaunchConfig *cfg,
                                      CUlaunchAttribute *attrs)
{
    memset(cfg, 0, sizeof *cfg);
    memset(attrs, 0, ASYNCRT_LAUNCH_MAX_ATTRS * sizeof *attrs);
    cfg->gridDimX = grid[0], cfg->gridDimY = grid[1], cfg->gridDimZ = grid[2];
    cfg->blockDimX = block[0], cfg->blockDimY = block[1], cfg->blockDimZ = block[2];
    cfg->sharedMemBytes = (unsigned)c->shared_bytes;
    cfg->hStream = (CUstream)c->stream;
    cfg->attrs = attrs;

    if (c->programmatic_serialization && ctx->info.cc_major < 9)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_UNSUPPORTED,
                            "launch of '%s': programmatic dependent launch "
                            "(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) needs sm_90+; "
                            "device %d is compute capability %d.%d", name, ctx->info.ordinal,
                            ctx->info.cc_major, ctx->info.cc_minor);
    unsigned cluster[3] = {0, 0, 0};
    int resident_clusters = 0;
    if (c->cluster[0] || c->cluster[1] || c->cluster[2]) {
        for (int i = 0; i < 3; i++) cluster[i] = c->cluster[i] ? c->cluster[i] : 1;
        CUlaunchAttribute *a = &attrs[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a->value.clusterDim.x = cluster[0];
        a->value.clusterDim.y = cluster[1];
        a->value.clusterDim.z = cluster[2];
        ASYNCRT_TRY(check_cluster(ctx, f, name, cfg, cluster, grid, &resident_clusters));
    }
    if (c->cooperative) {
        ASYNCRT_TRY(check_cooperative(ctx, f, name, cfg, cluster, resident_clusters));
        CUlaunchAttribute *a = &attrs[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        a->value.cooperative = 1;
    }
    if (c->programmatic_serialization) {
        CUlaunchAttribute *a = &attrs[cfg->numAttrs++];
        a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a->value.programmaticStreamSerializationAllowed = 1;
    }
    if (!cfg->numAttrs) cfg->attrs = NULL;
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_stream_priority_range(asyncrt_context *ctx, int *least, int *greatest)
{
    *least = *greatest = 0;
    ASYNCRT_TRY(asyncrt__require_device(ctx));
    CUresult r = ctx->drv->cuCtxGetStreamPriorityRange(least, greatest);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuCtxGetStreamPriorityRange",
                               "device %d", ctx->info.ordinal);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_stream_create_with_priority(asyncrt_context *ctx, int priority,
                                                   asyncrt_stream *out)
{
    *out = NULL;
    int least, greatest;
    ASYNCRT_TRY(asyncrt_stream_priority_range(ctx, &least, &greatest));
    if (priority > least || priority < greatest)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "stream priority %d is outside device %d's range [%d (most urgent), %d "
                            "(default)]: lower numbers are higher priorities", priority,
                            ctx->info.ordinal, greatest, least);
    CUstream stream = NULL;
    CUresult r = ctx->drv->cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, priority);
    if (r != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuStreamCreateWithPriority",
                               "priority %d", priority);
    *out = stream;
    return ASYNCRT_SUCCESS;
}
