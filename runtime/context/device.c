/* Device probe: attributes read from the driver, features derived from them. */
#include <stdio.h>
#include <string.h>

#include "context.h"
#include "nvrtc_facts.h"

asyncrt_features asyncrt_features_from_cc(int cc_major, int cc_minor, bool cluster_launch)
{
    int cc = cc_major * 10 + cc_minor;
    asyncrt_features f = {0};
    f.ldgsts = cc >= 80;
    f.mbarrier = cc >= 80;
    f.mbarrier_tx = cc >= 90;
    f.bulk_copy = cc >= 90;
    f.tma = cc >= 90;
    f.clusters = cc >= 90 && cluster_launch;
    /* Arch-specific ('a') code runs only on the exact arch it was built for. */
    f.sm90a = cc == 90;
    f.sm100a = cc == 100;
    return f;
}

double asyncrt_device_peak_bandwidth_gbs(const asyncrt_device_info *info)
{
    /* kHz x bytes per transfer x 2 (double data rate) */
    return 2.0 * info->memory_clock_khz * 1e3 * (info->memory_bus_width_bits / 8.0) / 1e9;
}

int asyncrt_nvrtc_version(void)
{
    const asyncrt_nvrtc *nv;
    return asyncrt__nvrtc_load(&nv, NULL, 0) == ASYNCRT_SUCCESS ? nv->version : 0;
}

static asyncrt_status device_count(asyncrt_context *ctx, int *count)
{
    *count = 0;
    ASYNCRT_TRY(asyncrt__require_driver(ctx));
    CUresult r = ctx->drv->cuDeviceGetCount(count);
    if (r != CUDA_SUCCESS) return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGetCount", "%s", "");
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_device_count(asyncrt_context *ctx, int *count)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, device_count(ctx, count));
}

static void format_uuid(const CUuuid *u, char *out, size_t size)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, size,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static asyncrt_status fill_info(asyncrt_context *ctx, int ordinal, asyncrt_device_info *out)
{
    int count = 0;
    ASYNCRT_TRY(asyncrt_device_count(ctx, &count));
    if (ordinal < 0 || ordinal >= count)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE,
                            "device %d does not exist: the driver reports %d device%s (valid: 0..%d)",
                            ordinal, count, count == 1 ? "" : "s", count - 1);
    const asyncrt_driver *d = ctx->drv;
    CUdevice dev;
    CUresult r = d->cuDeviceGet(&dev, ordinal);
    if (r != CUDA_SUCCESS) return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGet", "device %d", ordinal);

    out->ordinal = ordinal;
    if ((r = d->cuDeviceGetName(out->name, (int)sizeof out->name, dev)) != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGetName", "device %d", ordinal);
    CUuuid uuid;
    if ((r = d->cuDeviceGetUuid(&uuid, dev)) != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGetUuid", "device %d", ordinal);
    format_uuid(&uuid, out->uuid, sizeof out->uuid);
    if ((r = d->cuDeviceTotalMem(&out->total_memory_bytes, dev)) != CUDA_SUCCESS)
        return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceTotalMem", "device %d", ordinal);

    int cluster = 0;
    const struct {
        CUdevice_attribute attr;
        int *dst;
        const char *name;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out->cc_major, "COMPUTE_CAPABILITY_MAJOR"},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out->cc_minor, "COMPUTE_CAPABILITY_MINOR"},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &out->sm_count, "MULTIPROCESSOR_COUNT"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &out->shared_memory_per_block, "MAX_SHARED_MEMORY_PER_BLOCK"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &out->shared_memory_per_block_optin, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &out->shared_memory_per_sm, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &out->registers_per_block, "MAX_REGISTERS_PER_BLOCK"},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &out->registers_per_sm, "MAX_REGISTERS_PER_MULTIPROCESSOR"},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &out->l2_cache_bytes, "L2_CACHE_SIZE"},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &out->memory_clock_khz, "MEMORY_CLOCK_RATE"},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &out->memory_bus_width_bits, "GLOBAL_MEMORY_BUS_WIDTH"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block, "MAX_THREADS_PER_BLOCK"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &out->max_threads_per_sm, "MAX_THREADS_PER_MULTIPROCESSOR"},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &out->warp_size, "WARP_SIZE"},
        {CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &cluster, "CLUSTER_LAUNCH"},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        r = d->cuDeviceGetAttribute(attrs[i].dst, attrs[i].attr, dev);
        if (r != CUDA_SUCCESS)
            return asyncrt__fail_cu(ctx, ASYNCRT_ERROR_DRIVER, r, "cuDeviceGetAttribute",
                                   "CU_DEVICE_ATTRIBUTE_%s of device %d", attrs[i].name, ordinal);
    }
    out->cluster_launch = cluster != 0;
    out->driver_version = d->version;
    asyncrt_nvrtc_facts nvrtc; /* from the memo when there is one: opening a device opens no NVRTC */
    out->nvrtc_version =
        asyncrt__nvrtc_facts_get(ctx, &nvrtc, NULL, 0) == ASYNCRT_SUCCESS ? nvrtc.version : 0;
    out->features = asyncrt_features_from_cc(out->cc_major, out->cc_minor, out->cluster_launch);
    return ASYNCRT_SUCCESS;
}

/* The caller's struct is zeroed first (which checks its size), then filled. */
static asyncrt_status device_probe(asyncrt_context *ctx, int ordinal, asyncrt_device_info *out)
{
    asyncrt_device_info full = ASYNCRT_DEVICE_INFO_INIT;
    ASYNCRT_TRY(asyncrt__sized_give(ctx, ASYNCRT_SIZED_DEVICE_INFO, out, &full, "device info"));
    ASYNCRT_TRY(fill_info(ctx, ordinal, &full));
    return asyncrt__sized_give(ctx, ASYNCRT_SIZED_DEVICE_INFO, out, &full, "device info");
}

asyncrt_status asyncrt_device_probe(asyncrt_context *ctx, int ordinal, asyncrt_device_info *out)
{
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, device_probe(ctx, ordinal, out));
}
