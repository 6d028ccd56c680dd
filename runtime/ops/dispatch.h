/* Which path a built-in op takes when the caller leaves it to us (AUTO):
 *   1. $ASYNCRT_PATH or the description's path forces one (op_util.c);
 *   2. else a calibration file measured on this exact device (UUID) under
 *      this driver (`asyncrt-bench --calibrate` writes it into the cache
 *      directory), strictly validated: anything damaged or foreign is
 *      ignored with a log line;
 *   3. else the built-in table of winners measured per architecture family;
 *   4. else the newest path the target has (TMA, LDGSTS, plain).
 * Rankings list the paths fastest first; the first one the target can run
 * wins, so a compute_80 build on an sm_90 device takes the sm_90 ranking
 * minus TMA. The choice itself is a pure function, tested on the CPU. */
#ifndef ASYNCRT_DISPATCH_H
#define ASYNCRT_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "asyncrt/ops.h"
#include "asyncrt/status.h"

/* The paths, one list for every op, the dispatcher and the calibration
 * files: (the public enum value, its name, the oldest arch it runs on). The
 * names are the public asyncrt_op_path_name strings, and name the
 * kernels_src/ templates (map_<name>.cuh). */
#define ASYNCRT_OP_PATHS(X)              \
    X(ASYNCRT_PATH_AUTO, "auto", 0)      \
    X(ASYNCRT_PATH_TMA, "tma", 90)       \
    X(ASYNCRT_PATH_LDGSTS, "ldgsts", 80) \
    X(ASYNCRT_PATH_PLAIN, "plain", 0)

/* The path named `name` ("auto" included), or -1. */
int asyncrt__path_parse(const char *name);

typedef enum asyncrt_dispatch_op {
    ASYNCRT_DISPATCH_MAP = 0,   /* asyncrt_map */
    ASYNCRT_DISPATCH_TRANSPOSE, /* asyncrt_tile, TRANSPOSE */
    ASYNCRT_DISPATCH_TILE_MAP,  /* asyncrt_tile, MAP */
    ASYNCRT_DISPATCH_STENCIL,   /* asyncrt_tile, STENCIL */
    ASYNCRT_DISPATCH_OP_COUNT
} asyncrt_dispatch_op;

const char *asyncrt__dispatch_op_name(asyncrt_dispatch_op op); /* "map", "transpose", "tilemap", "stencil" */

/* One op's paths, fastest first, with their share of cuMemcpyDtoD in percent. */
typedef struct asyncrt_dispatch_rank {
    int count; /* 0: nothing measured */
    asyncrt_op_path path[3];
    double pct[3];
} asyncrt_dispatch_rank;

typedef struct asyncrt_calibration {
    char uuid[48];      /* the device's, "GPU-..." */
    int driver_version; /* cuDriverGetVersion, e.g. 13000 */
    int cc;             /* 90 for 9.0 */
    asyncrt_dispatch_rank rank[ASYNCRT_DISPATCH_OP_COUNT];
} asyncrt_calibration;

/* The path for `op` on a device of compute capability `device_cc` (the
 * arch's number when no device is open) compiled for `target` (a path
 * needing more than the target is skipped). `cal`: this device's
 * calibration or NULL. `why` gets the rule that decided and its evidence. */
asyncrt_op_path asyncrt__dispatch_choose(asyncrt_dispatch_op op, int device_cc, int target,
                                         const asyncrt_calibration *cal, char *why, size_t why_size);

/* The oldest arch a path runs on: 90, 80 or 0. */
int asyncrt__dispatch_path_needs(asyncrt_op_path path);

/* Parses a calibration file's text. False (with `why`) unless it is
 * complete and well formed and its UUID and driver are `uuid` and
 * `driver_version`. */
bool asyncrt__calibration_parse(const char *text, size_t size, const char *uuid, int driver_version,
                               asyncrt_calibration *out, char *why, size_t why_size);
/* The text of a calibration file (malloc'd; NULL when out of memory). */
char *asyncrt__calibration_format(const asyncrt_calibration *cal);

/* <cache dir>/calibration-<uuid>.txt (malloc'd), or NULL without a cache
 * directory. */
char *asyncrt__calibration_path(const char *cache_dir, const char *uuid);

#endif

/* ---- calibration (calibrate.c): measuring each path on the open device ---- */

typedef struct asyncrt_context asyncrt_context;

typedef struct asyncrt_calibrate_sizes {
    size_t map_elements;        /* f32 elements of y = a*x + b */
    size_t tile_rows, tile_cols; /* the f32 matrix of transpose, tile map, stencil */
    int warmup, repeats;        /* runs, the median of `repeats` counted */
} asyncrt_calibrate_sizes;

/* Times every path the open device has for each op (random data, the same
 * run's cuMemcpyDtoD of the same bytes as 100%) and ranks them into `out`. */
asyncrt_status asyncrt__calibrate(asyncrt_context *ctx, const asyncrt_calibrate_sizes *sizes, asyncrt_calibration *out);
/* Writes `cal` where the dispatcher looks for it (atomically: a temporary
 * file renamed); `*path_out` (malloc'd) says where. */
asyncrt_status asyncrt__calibration_save(asyncrt_context *ctx, const asyncrt_calibration *cal, char **path_out);
