/* One-shot calibration: every path of every built-in op on the open device,
 * timed against cuMemcpyDtoD of the same bytes, ranked, and kept beside the
 * program cache (dispatch.h says how the dispatcher uses it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncrt/asyncrt.h"
#include "cache.h"
#include "context.h"
#include "dispatch.h"

typedef struct cal_run {
    asyncrt_context *ctx;
    asyncrt_dispatch_op op;
    asyncrt_map *map;
    asyncrt_tile_op *tile;
    size_t n, rows, cols;
    asyncrt_deviceptr in, out;
} cal_run;

static asyncrt_status run_once(const cal_run *r)
{
    static const float a = 1.5f, b = 0.25f;
    const void *scalars[] = {&a, &b};
    if (r->map) return asyncrt_map_launch(r->map, r->n, &r->in, &r->out, scalars, NULL);
    if (r->tile) return asyncrt_tile_launch(r->tile, r->rows, r->cols, r->in, r->out, NULL);
    return asyncrt_memory_copy(r->ctx, r->out, r->in, r->n * 4, NULL);
}

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median milliseconds of one run. */
static asyncrt_status time_run(const cal_run *r, const asyncrt_calibrate_sizes *z, double *ms)
{
    asyncrt_timer *t = NULL;
    double *samples = calloc((size_t)z->repeats, sizeof *samples);
    asyncrt_status s = samples ? asyncrt_timer_create(r->ctx, &t) : ASYNCRT_ERROR_OUT_OF_MEMORY;
    for (int i = 0; s == ASYNCRT_SUCCESS && i < z->warmup; i++) s = run_once(r);
    for (int i = 0; s == ASYNCRT_SUCCESS && i < z->repeats; i++) {
        float elapsed = 0;
        if ((s = asyncrt_timer_start(t, NULL)) != ASYNCRT_SUCCESS || (s = run_once(r)) != ASYNCRT_SUCCESS ||
            (s = asyncrt_timer_stop(t, NULL)) != ASYNCRT_SUCCESS ||
            (s = asyncrt_timer_elapsed_ms(t, &elapsed)) != ASYNCRT_SUCCESS)
            break;
        samples[i] = elapsed;
    }
    if (s == ASYNCRT_SUCCESS) {
        qsort(samples, (size_t)z->repeats, sizeof *samples, compare_double);
        *ms = samples[z->repeats / 2];
    }
    asyncrt_timer_destroy(t);
    free(samples);
    return s;
}

static asyncrt_status make_op(cal_run *r, asyncrt_op_path path)
{
    static const asyncrt_map_arg x = {"x", ASYNCRT_F32}, y = {"y", ASYNCRT_F32};
    static const asyncrt_map_arg ab[] = {{"a", ASYNCRT_F32}, {"b", ASYNCRT_F32}};
    static const float five_point[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    if (r->op == ASYNCRT_DISPATCH_MAP) {
        asyncrt_map_desc d = {.size = sizeof d,
                              .inputs = &x, .input_count = 1, .outputs = &y, .output_count = 1, .scalars = ab,
                              .scalar_count = 2, .expression = "y = a * x + b;", .path = path};
        return asyncrt_map_create(r->ctx, &d, &r->map);
    }
    asyncrt_tile_desc d = {.size = sizeof d, .dtype = ASYNCRT_F32, .path = path};
    d.kind = r->op == ASYNCRT_DISPATCH_TRANSPOSE ? ASYNCRT_TILE_TRANSPOSE
             : r->op == ASYNCRT_DISPATCH_TILE_MAP ? ASYNCRT_TILE_MAP
                                                  : ASYNCRT_TILE_STENCIL;
    if (d.kind == ASYNCRT_TILE_MAP) d.expression = "out = v * 2 + 1;";
    if (d.kind == ASYNCRT_TILE_STENCIL) d.radius = 1, d.weights = five_point;
    return asyncrt_tile_create(r->ctx, &d, &r->tile);
}

/* Random bytes into `p` (a 1 MiB host block, repeated). */
static asyncrt_status random_fill(asyncrt_context *ctx, asyncrt_deviceptr p, size_t bytes)
{
    enum { BLOCK = 1 << 20 };
    uint32_t *host = malloc(BLOCK), x = 0x9e3779b9u;
    if (!host) return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "calibration: out of memory");
    for (size_t i = 0; i < BLOCK / 4; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        host[i] = (x & 0x807fffffu) | 0x3f000000u; /* finite floats in [0.5, 2) with either sign */
    }
    asyncrt_status s = ASYNCRT_SUCCESS;
    for (size_t at = 0; s == ASYNCRT_SUCCESS && at < bytes; at += BLOCK)
        s = asyncrt_memory_to_device(ctx, p + at, host, bytes - at < BLOCK ? bytes - at : BLOCK);
    free(host);
    return s;
}

static void rank_sort(asyncrt_dispatch_rank *r)
{
    for (int i = 1; i < r->count; i++)
        for (int j = i; j > 0 && r->pct[j] > r->pct[j - 1]; j--) {
            double p = r->pct[j];
            asyncrt_op_path q = r->path[j];
            r->pct[j] = r->pct[j - 1], r->path[j] = r->path[j - 1];
            r->pct[j - 1] = p, r->path[j - 1] = q;
        }
}

asyncrt_status asyncrt__calibrate(asyncrt_context *ctx, const asyncrt_calibrate_sizes *z, asyncrt_calibration *out)
{
    memset(out, 0, sizeof *out);
    const asyncrt_device_info *dev = asyncrt_context_device(ctx);
    if (!dev) return asyncrt__fail(ctx, ASYNCRT_ERROR_NO_DEVICE, "calibration: no device is open");
    if (z->repeats < 1 || z->warmup < 0 || !z->map_elements || !z->tile_rows || !z->tile_cols)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "calibration: sizes and repeats must be positive (repeats %d, warmup %d)", z->repeats,
                            z->warmup);
    snprintf(out->uuid, sizeof out->uuid, "%s", dev->uuid);
    out->driver_version = dev->driver_version;
    out->cc = dev->cc_major * 10 + dev->cc_minor;
    size_t tile_n = z->tile_rows * z->tile_cols, n = tile_n > z->map_elements ? tile_n : z->map_elements;
    asyncrt_deviceptr in = 0, buf = 0;
    asyncrt_status s;
    if ((s = asyncrt_memory_alloc(ctx, n * 4, &in)) != ASYNCRT_SUCCESS) goto done;
    if ((s = asyncrt_memory_alloc(ctx, n * 4, &buf)) != ASYNCRT_SUCCESS) goto done;
    if ((s = random_fill(ctx, in, n * 4)) != ASYNCRT_SUCCESS) goto done;
    for (int op = 0; s == ASYNCRT_SUCCESS && op < ASYNCRT_DISPATCH_OP_COUNT; op++) {
        cal_run r = {.ctx = ctx, .op = (asyncrt_dispatch_op)op, .in = in, .out = buf};
        r.n = op == ASYNCRT_DISPATCH_MAP ? z->map_elements : tile_n;
        r.rows = z->tile_rows, r.cols = z->tile_cols;
        double copy_ms = 0, ms = 0;
        if ((s = time_run(&r, z, &copy_ms)) != ASYNCRT_SUCCESS) break; /* no op yet: the copy */
        asyncrt_dispatch_rank *rank = &out->rank[op];
        for (asyncrt_op_path p = ASYNCRT_PATH_TMA; s == ASYNCRT_SUCCESS && p <= ASYNCRT_PATH_PLAIN; p++) {
            if ((p == ASYNCRT_PATH_TMA && !dev->features.tma) || (p == ASYNCRT_PATH_LDGSTS && !dev->features.ldgsts))
                continue;
            r.map = NULL, r.tile = NULL;
            if ((s = make_op(&r, p)) == ASYNCRT_SUCCESS && (s = time_run(&r, z, &ms)) == ASYNCRT_SUCCESS) {
                rank->path[rank->count] = p;
                rank->pct[rank->count++] = ms > 0 ? 100.0 * copy_ms / ms : 0;
                asyncrt__log(ctx, 1, "calibration: %s %s %.4f ms, D2D %.4f ms", asyncrt__dispatch_op_name(r.op),
                            asyncrt_op_path_name(p), ms, copy_ms);
            }
            asyncrt_map_destroy(r.map);
            asyncrt_tile_destroy(r.tile);
        }
        for (int i = 0; i < rank->count; i++) /* the file's format: 0.01 .. 200.00 */
            rank->pct[i] = rank->pct[i] < 0.01 ? 0.01 : rank->pct[i] > 200 ? 200 : rank->pct[i];
        rank_sort(rank);
    }
    if (s == ASYNCRT_SUCCESS) s = asyncrt_synchronize(ctx);
done:
    asyncrt_memory_free(ctx, in);
    asyncrt_memory_free(ctx, buf);
    return s;
}

asyncrt_status asyncrt__calibration_save(asyncrt_context *ctx, const asyncrt_calibration *cal, char **path_out)
{
    *path_out = NULL;
    char *path = asyncrt__calibration_path(asyncrt_context_cache_dir(ctx), cal->uuid);
    if (!path)
        return asyncrt__fail(ctx, ASYNCRT_ERROR_INVALID_ARGUMENT,
                            "calibration: the disk cache is off, so there is nowhere to keep the result; set "
                            "ASYNCRT_CACHE_DIR");
    /* A side file of the cache (cache.h): written like its entries, and only
     * into a directory the cache trusts. */
    char *text = asyncrt__calibration_format(cal);
    asyncrt_status s = ASYNCRT_SUCCESS;
    if (!text) s = asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "calibration: out of memory");
    else if (!asyncrt__cache_write_side(ctx->cache, strrchr(path, '/') + 1, text))
        s = asyncrt__fail(ctx, ASYNCRT_ERROR_IO, "calibration: cannot write %s (ASYNCRT_LOG=1 says why)", path);
    free(text);
    if (s != ASYNCRT_SUCCESS) free(path);
    else *path_out = path;
    return s;
}
