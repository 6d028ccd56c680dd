/* asyncrt-bench --calibrate: ranks each op's paths on this device and keeps
 * the result where the dispatcher finds it. */
#include <stdio.h>
#include <stdlib.h>

#include "asyncrt/ops.h"
#include "tile_sweep.h"

int bench_calibrate(asyncrt_context *ctx, const bench_settings *s)
{
    /* The benchmark's sizes: 1 GiB of f32 for the map, 16384 x 16384 for the tile ops. */
    asyncrt_calibrate_options opts = ASYNCRT_CALIBRATE_OPTIONS_INIT;
    opts.map_elements = (size_t)1 << 28;
    opts.tile_rows = opts.tile_cols = 16384;
    opts.warmup = s->warmup;
    opts.repeats = s->repeats;
    char *path = NULL, *text = NULL;
    if (asyncrt_calibrate(ctx, &opts, &path, &text) != ASYNCRT_SUCCESS) {
        fprintf(stderr, "asyncrt-bench: calibration: %s\n", asyncrt_context_last_error(ctx));
        return 1;
    }
    printf("calibration written to %s:\n%s", path, text);
    free(text);
    free(path);
    return 0;
}
