/* asyncrt-bench --calibrate: ranks each op's paths on this device and keeps
 * the result where the dispatcher finds it. */
#include <stdio.h>
#include <stdlib.h>

#include "ops_internal.h" /* measuring and saving a calibration */
#include "tile_sweep.h"

int bench_calibrate(asyncrt_context *ctx, const bench_settings *s)
{
    /* The benchmark's sizes: 1 GiB of f32 for the map, 16384 x 16384 for the tile ops. */
    asyncrt_calibrate_sizes sizes = {.map_elements = (size_t)1 << 28, .tile_rows = 16384, .tile_cols = 16384,
                                     .warmup = s->warmup, .repeats = s->repeats};
    asyncrt_calibration cal;
    char *path = NULL;
    if (asyncrt__calibrate(ctx, &sizes, &cal) || asyncrt__calibration_save(ctx, &cal, &path)) {
        fprintf(stderr, "asyncrt-bench: calibration: %s\n", asyncrt_context_last_error(ctx));
        return 1;
    }
    char *text = asyncrt__calibration_format(&cal);
    printf("calibration written to %s:\n%s", path, text ? text : "(out of memory)\n");
    free(text);
    free(path);
    return 0;
}
