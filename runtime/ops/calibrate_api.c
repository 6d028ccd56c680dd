/* The public face of calibrate.c and the path names (asyncrt/ops.h):
 * asyncrt-bench --calibrate and --paths use these, not the internals. */
#include <stdlib.h>

#include "asyncrt/ops.h"
#include "context_report.h"
#include "dispatch.h"
#include "try.h"

bool asyncrt_op_path_parse(const char *name, asyncrt_op_path *out)
{
    int p = name && out ? asyncrt__path_parse(name) : -1;
    if (p < 0) return false;
    *out = (asyncrt_op_path)p;
    return true;
}

static asyncrt_status calibrate(asyncrt_context *ctx, const asyncrt_calibrate_options *opts, char **path,
                                char **text)
{
    asyncrt_calibrate_options o = ASYNCRT_CALIBRATE_OPTIONS_INIT;
    if (opts) ASYNCRT_TRY(asyncrt__sized_take(ctx, ASYNCRT_SIZED_CALIBRATE_OPTIONS, opts, &o, "calibrate options"));
    asyncrt_calibrate_sizes sizes = {.map_elements = o.map_elements ? o.map_elements : (size_t)1 << 28,
                                     .tile_rows = o.tile_rows ? o.tile_rows : 16384,
                                     .tile_cols = o.tile_cols ? o.tile_cols : 16384,
                                     .warmup = o.warmup, .repeats = o.repeats ? o.repeats : 20};
    asyncrt_calibration cal;
    char *where = NULL;
    ASYNCRT_TRY(asyncrt__calibrate(ctx, &sizes, &cal));
    ASYNCRT_TRY(asyncrt__calibration_save(ctx, &cal, &where));
    if (text && !(*text = asyncrt__calibration_format(&cal))) {
        free(where);
        return asyncrt__fail(ctx, ASYNCRT_ERROR_OUT_OF_MEMORY, "calibration: out of memory");
    }
    if (path) *path = where;
    else free(where);
    return ASYNCRT_SUCCESS;
}

asyncrt_status asyncrt_calibrate(asyncrt_context *ctx, const asyncrt_calibrate_options *opts, char **path,
                                 char **text)
{
    if (path) *path = NULL;
    if (text) *text = NULL;
    if (!ctx) return ASYNCRT_ERROR_INVALID_ARGUMENT;
    asyncrt__enter(ctx);
    return asyncrt__leave(ctx, calibrate(ctx, opts, path, text));
}
