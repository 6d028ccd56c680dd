/* Buffer initialisation and transfers. */
#include "buffers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

/* splitmix64 of (seed, index): reproducible and independent of the order in
 * which elements are generated. */
double run_random_unit(uint64_t seed, uint64_t i)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + (i + 1) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static int fill_from_npy(const run_buffer_spec *s, run_buffer *b, char *err, size_t err_size)
{
    run_npy npy;
    void *storage = NULL;
    char why[600];
    if (!run_npy_read(s->path, &npy, &storage, why, sizeof why)) {
        snprintf(err, err_size, "--buf %s: %s", s->name, why);
        return RUN_EXIT_IO;
    }
    int rc = RUN_EXIT_OK;
    if (s->from_file) {
        b->dtype = npy.dtype;
        b->rank = npy.rank;
        memcpy(b->shape, npy.shape, sizeof npy.shape);
        b->count = npy.count;
    } else if (npy.count != b->count) {
        snprintf(err, err_size, "--buf %s: %s holds %llu elements but the buffer has %llu", s->name, s->path,
                 (unsigned long long)npy.count, (unsigned long long)b->count);
        rc = RUN_EXIT_USAGE;
    }
    b->bytes = (size_t)b->count * run_dtype_size(b->dtype);
    if (rc == RUN_EXIT_OK && !(b->host = malloc(b->bytes ? b->bytes : 1))) rc = RUN_EXIT_INTERNAL;
    if (rc == RUN_EXIT_OK && npy.dtype == b->dtype) {
        memcpy(b->host, npy.data, b->bytes);
    } else if (rc == RUN_EXIT_OK) {
        /* Converted values must fit: no silent clamping, NaN-to-0 or overflow to infinity. */
        size_t in = run_dtype_size(npy.dtype), o = run_dtype_size(b->dtype);
        for (uint64_t i = 0; rc == RUN_EXIT_OK && i < b->count; i++) {
            long double v = run_value_load(npy.dtype, (const char *)npy.data + i * in);
            if (!run_value_fits(b->dtype, v, why, sizeof why)) {
                snprintf(err, err_size, "--buf %s: %s element %llu: %s", s->name, s->path, (unsigned long long)i, why);
                rc = RUN_EXIT_USAGE;
            } else {
                run_value_store(b->dtype, v, (char *)b->host + i * o);
            }
        }
    }
    if (rc == RUN_EXIT_INTERNAL) snprintf(err, err_size, "--buf %s: out of memory", s->name);
    free(storage);
    return rc;
}

/* allocate false (--compile-only): the shape and size only, no host copy;
 * a .npy file is still read and converted, which is what checks it. */
static int init_one(const run_buffer_spec *s, run_buffer *b, bool allocate, char *err, size_t err_size)
{
    b->name = s->name;
    b->dtype = s->dtype;
    b->rank = s->rank;
    memcpy(b->shape, s->shape, sizeof s->shape);
    b->count = s->count;
    if (s->init == RUN_INIT_NPY) return fill_from_npy(s, b, err, err_size);
    b->bytes = (size_t)b->count * run_dtype_size(b->dtype);
    if (!allocate) return RUN_EXIT_OK;
    /* A host copy larger than the machine's memory is refused up front: with
     * overcommit, calloc could succeed and the initialisation below would then
     * bring in the OOM killer instead of an error. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    bool too_big = pages > 0 && page > 0 && b->bytes / (size_t)page >= (size_t)pages;
    if (too_big || !(b->host = calloc(1, b->bytes ? b->bytes : 1))) {
        snprintf(err, err_size, "--buf %s: cannot allocate %zu bytes of host memory%s", s->name, b->bytes,
                 too_big ? " (more than this machine has)" : "");
        return RUN_EXIT_INTERNAL;
    }
    size_t size = run_dtype_size(b->dtype);
    char *p = b->host;
    switch (s->init) {
    case RUN_INIT_ZEROS: break;
    case RUN_INIT_POISON: memset(p, 0xff, b->bytes); break;
    case RUN_INIT_FILL:
        for (uint64_t i = 0; i < b->count; i++) run_value_store(b->dtype, s->a, p + i * size);
        break;
    case RUN_INIT_IOTA:
        for (uint64_t i = 0; i < b->count; i++) run_value_store(b->dtype, s->a + (long double)i * s->b, p + i * size);
        break;
    default: { /* RUN_INIT_RAND */
        bool is_float = run_dtype_is_float(b->dtype);
        for (uint64_t i = 0; i < b->count; i++) {
            long double v = s->a + (s->b - s->a) * run_random_unit(s->seed, i);
            if (!is_float) v = floorl(v);
            if (!is_float && v >= s->b) v = s->b - 1; /* rounding at the top of the range */
            run_value_store(b->dtype, v, p + i * size);
        }
    }
    }
    return RUN_EXIT_OK;
}

int run_buffers_init(const run_cli *cli, run_buffer *out, char *err, size_t err_size)
{
    for (size_t i = 0; i < cli->buffer_count; i++) {
        memset(&out[i], 0, sizeof out[i]);
        int rc = init_one(&cli->buffers[i], &out[i], !cli->compile_only, err, err_size);
        if (rc != RUN_EXIT_OK) return rc;
    }
    return RUN_EXIT_OK;
}

asyncrt_status run_buffers_upload(asyncrt_context *ctx, run_buffer *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        /* At least 256 bytes: an empty .npy still gets a valid, aligned address. */
        asyncrt_status s = asyncrt_memory_alloc(ctx, b[i].bytes > 256 ? b[i].bytes : 256, &b[i].dev);
        if (s == ASYNCRT_SUCCESS && b[i].bytes) s = asyncrt_memory_to_device(ctx, b[i].dev, b[i].host, b[i].bytes);
        if (s != ASYNCRT_SUCCESS) return s;
    }
    return ASYNCRT_SUCCESS;
}

asyncrt_status run_buffers_download(asyncrt_context *ctx, run_buffer *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!b[i].bytes) continue;
        asyncrt_status s = asyncrt_memory_to_host(ctx, b[i].host, b[i].dev, b[i].bytes);
        if (s != ASYNCRT_SUCCESS) return s;
    }
    return ASYNCRT_SUCCESS;
}

void run_buffers_free(asyncrt_context *ctx, run_buffer *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (ctx && b[i].dev) asyncrt_memory_free(ctx, b[i].dev);
        free(b[i].host);
        b[i].host = NULL;
        b[i].dev = 0;
    }
}
