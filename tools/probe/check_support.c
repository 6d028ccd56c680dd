/* Helpers shared by the feature checks. */
#include "check_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"

void chk_begin(probe_check *c, asyncrt_context *ctx, probe_feature feature, char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->feature = feature;
    c->why = why;
    c->why_size = why_size;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^ (uint64_t)feature;
    c->rng = c->seed;
    if (why_size) why[0] = '\0';
}

void chk_end(probe_check *c)
{
    for (int i = 0; i < c->device_count; i++) asyncrt_memory_free(c->ctx, c->device[i]);
    for (int i = 0; i < c->host_count; i++) free(c->host[i]);
    asyncrt_module_destroy(c->module);
    c->device_count = c->host_count = 0;
    c->module = NULL;
}

bool chk_fail(probe_check *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->why_size, fmt, ap);
    va_end(ap);
    return false;
}

/* The first line of the context's message: compile logs can be long. */
static bool fail_ctx(probe_check *c, const char *what)
{
    const char *msg = asyncrt_context_last_error(c->ctx);
    size_t len = strcspn(msg, "\n");
    return chk_fail(c, "%s: %.*s", what, (int)len, msg);
}

uint32_t chk_random(probe_check *c)
{
    /* splitmix64 */
    uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 16);
}

bool chk_kernel(probe_check *c, const char *name, asyncrt_kernel **out)
{
    if (!c->module) {
        const probe_feature_desc *d = probe_feature_get(c->feature);
        if (probe_build_module(c->ctx, d->define, d->compile_arch, &c->module) != ASYNCRT_SUCCESS)
            return fail_ctx(c, "build");
    }
    if (asyncrt_module_get_kernel(c->module, name, out) != ASYNCRT_SUCCESS) return fail_ctx(c, "kernel");
    return true;
}

static bool track_device(probe_check *c, size_t bytes, asyncrt_deviceptr *device)
{
    if (c->device_count == CHK_MAX_BUFFERS) return chk_fail(c, "internal: too many device buffers");
    if (asyncrt_memory_alloc(c->ctx, bytes, device) != ASYNCRT_SUCCESS) return fail_ctx(c, "allocation");
    c->device[c->device_count++] = *device;
    return true;
}

uint32_t *chk_host(probe_check *c, size_t words)
{
    uint32_t *p = NULL;
    if (c->host_count == CHK_MAX_BUFFERS) {
        chk_fail(c, "internal: too many host buffers");
        return NULL;
    }
    if (!(p = calloc(words, sizeof *p))) {
        chk_fail(c, "out of host memory");
        return NULL;
    }
    c->host[c->host_count++] = p;
    return p;
}

uint32_t *chk_input(probe_check *c, size_t words, asyncrt_deviceptr *device)
{
    uint32_t *host = chk_host(c, words);
    if (!host || !track_device(c, words * 4, device)) return NULL;
    for (size_t i = 0; i < words; i++) host[i] = chk_random(c);
    if (asyncrt_memory_to_device(c->ctx, *device, host, words * 4) != ASYNCRT_SUCCESS) {
        fail_ctx(c, "upload");
        return NULL;
    }
    return host;
}

bool chk_output(probe_check *c, size_t words, asyncrt_deviceptr *device)
{
    if (!track_device(c, words * 4, device)) return false;
    if (asyncrt_memory_fill(c->ctx, *device, 0xFF, words * 4, NULL) != ASYNCRT_SUCCESS) return fail_ctx(c, "poison");
    return true;
}

bool chk_launch(probe_check *c, asyncrt_kernel *k, unsigned grid_x, unsigned grid_y, unsigned block,
                unsigned cluster, void **args, const size_t *sizes, size_t count)
{
    asyncrt_launch_config cfg = {.size = sizeof cfg,
                                 .grid = {grid_x, grid_y, 1}, .block = {block, 1, 1}, .cluster = {cluster, 0, 0}};
    if (cluster) cfg.cluster[1] = cfg.cluster[2] = 1;
    if (asyncrt_kernel_launch(k, &cfg, args, sizes, count) != ASYNCRT_SUCCESS) return fail_ctx(c, "launch");
    if (asyncrt_synchronize(c->ctx) != ASYNCRT_SUCCESS) return fail_ctx(c, "kernel");
    return true;
}

bool chk_verify(probe_check *c, asyncrt_deviceptr device, const uint32_t *expected, size_t words)
{
    uint32_t *got = chk_host(c, words);
    if (!got) return false;
    if (asyncrt_memory_to_host(c->ctx, got, device, words * 4) != ASYNCRT_SUCCESS) return fail_ctx(c, "download");
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < words; i++)
        if (got[i] != expected[i] && bad++ == 0) first = i;
    if (bad)
        return chk_fail(c, "%zu of %zu words wrong, first at %zu: got 0x%08x, expected 0x%08x (seed 0x%llx)", bad,
                        words, first, got[first], expected[first], (unsigned long long)c->seed);
    return true;
}
