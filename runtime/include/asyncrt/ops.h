/* asyncrt built-in ops.
 *
 * map: y_j = f(x_1..x_k) elementwise over 1D arrays, where f is C/C++
 * statements given at run time (like CuPy's ElementwiseKernel), e.g.
 * "y = a * x + b;". The runtime generates a kernel from kernels_src/map_*.cuh
 * for the chosen path, compiles it once through asyncrt_program_compile (so
 * the program cache applies) and launches it over any length and alignment.
 *
 * In the expression, inputs and scalars are const values and outputs are
 * references (initialised to 0). f16 and bf16 values are computed as float
 * and rounded to nearest even when stored; the other dtypes are their C
 * types (float, double, int, unsigned). */
#ifndef ASYNCRT_OPS_H
#define ASYNCRT_OPS_H

#include <stddef.h>

#include "asyncrt/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum asyncrt_dtype {
    ASYNCRT_F32 = 0,
    ASYNCRT_F64,
    ASYNCRT_I32,
    ASYNCRT_U32,
    ASYNCRT_F16,  /* IEEE binary16, stored as its 16 bits (uint16_t on the host) */
    ASYNCRT_BF16, /* bfloat16, stored as its 16 bits */
    ASYNCRT_DTYPE_COUNT
} asyncrt_dtype;

/* "f32", "f64", "i32", "u32", "f16", "bf16"; NULL for an unknown value. */
ASYNCRT_EXTERN const char *asyncrt_dtype_name(asyncrt_dtype dtype);
/* Bytes per element; 0 for an unknown value. */
ASYNCRT_EXTERN size_t asyncrt_dtype_size(asyncrt_dtype dtype);

/* The path an op runs: the map's, and the tile ops' (tile_ops.h). */
typedef enum asyncrt_op_path {
    ASYNCRT_PATH_AUTO = 0, /* $ASYNCRT_PATH, else the fastest measured (docs/library.md, "Which path an op takes") */
    ASYNCRT_PATH_TMA,      /* cp.async.bulk into mbarrier-completed stages (sm_90+) */
    ASYNCRT_PATH_LDGSTS,   /* multi-stage cp.async pipeline (sm_80+) */
    ASYNCRT_PATH_PLAIN     /* 16-byte vector loads and stores (any arch) */
} asyncrt_op_path;
/* Its name from when the map was the only op that took it: code written
 * against it compiles unchanged. */
typedef asyncrt_op_path asyncrt_map_path;

/* "auto", "tma", "ldgsts", "plain"; NULL for an unknown value. */
ASYNCRT_EXTERN const char *asyncrt_op_path_name(asyncrt_op_path path);
/* The same, under its earlier name. */
ASYNCRT_EXTERN const char *asyncrt_map_path_name(asyncrt_map_path path);
/* The path named "auto", "tma", "ldgsts" or "plain" into *out; false for
 * another name (or NULL). */
ASYNCRT_EXTERN bool asyncrt_op_path_parse(const char *name, asyncrt_op_path *out);

/* What asyncrt_calibrate measures. Set .size with ASYNCRT_CALIBRATE_OPTIONS_INIT. */
typedef struct asyncrt_calibrate_options {
    size_t size;
    size_t map_elements;         /* f32 elements of the map's y = a*x + b; 0: 1 << 28 (1 GiB) */
    size_t tile_rows, tile_cols; /* the f32 matrix of transpose, tile map, stencil; 0: 16384 */
    int warmup;                  /* untimed runs first (0: none) */
    int repeats;                 /* timed runs, the median counted; 0: 20 */
} asyncrt_calibrate_options;
#define ASYNCRT_CALIBRATE_OPTIONS_INIT ASYNCRT_SIZED_INIT(asyncrt_calibrate_options)

/* Times every path the open device has for each built-in op (random data,
 * the same run's cuMemcpyDtoD of the same bytes as 100%), ranks them and
 * saves the ranking where the path dispatcher reads it (a side file of the
 * disk cache, written atomically). *path and *text (malloc'd, the caller
 * frees; either may be NULL) say where and what. opts NULL: the defaults.
 * ASYNCRT_ERROR_NO_DEVICE without an open device, INVALID_ARGUMENT without a
 * disk cache or for a negative warmup or repeats, IO when it cannot be
 * written. */
ASYNCRT_EXTERN asyncrt_status asyncrt_calibrate(asyncrt_context *ctx, const asyncrt_calibrate_options *opts,
                                                char **path, char **text);

/* An element of an array (asyncrt_map_desc): its layout is frozen. */
typedef struct asyncrt_map_arg {
    const char *name;    /* a C identifier, unique in the map, not starting with "asyncrt" or "_" */
    asyncrt_dtype dtype;
} asyncrt_map_arg;

typedef struct asyncrt_map_desc {
    /* Set it with ASYNCRT_MAP_DESC_INIT (or .size = sizeof(asyncrt_map_desc)): the
     * library reads only the fields this size covers (docs/deployment.md, "ABI and versioning"). */
    size_t size;
    const asyncrt_map_arg *inputs;   /* at least 1 */
    size_t input_count;
    const asyncrt_map_arg *outputs;  /* at least 1 */
    size_t output_count;
    const asyncrt_map_arg *scalars;  /* may be NULL when scalar_count is 0 */
    size_t scalar_count;
    const char *expression;          /* statements, e.g. "y = a * x + b;" */
    /* ASYNCRT_PATH_AUTO lets $ASYNCRT_PATH (tma|ldgsts|plain) or the
     * dispatcher decide; any other value forces that path. A path the target or the
     * device cannot run gives ASYNCRT_ERROR_UNSUPPORTED. */
    asyncrt_op_path path;
    /* NULL or "auto": the open device's target. Otherwise e.g. "sm_90" or
     * "compute_80". Without an open device the map is compiled but cannot be
     * launched: that needs an explicit arch. With a device open, a target
     * its driver cannot load (PTX from an NVRTC newer than the driver) is
     * ASYNCRT_ERROR_VERSION_MISMATCH before compiling (docs/library.md: arch
     * selection). */
    const char *arch;
} asyncrt_map_desc;
#define ASYNCRT_MAP_DESC_INIT ASYNCRT_SIZED_INIT(asyncrt_map_desc)

typedef struct asyncrt_map asyncrt_map;

/* Validates the description, generates and compiles the kernel, and loads it
 * when a device is open. A bad expression gives ASYNCRT_ERROR_COMPILE with
 * NVRTC's errors, which name the expression as "map expression(LINE)".
 * *out is NULL on failure. */
ASYNCRT_EXTERN asyncrt_status asyncrt_map_create(asyncrt_context *ctx, const asyncrt_map_desc *desc, asyncrt_map **out);
ASYNCRT_EXTERN void asyncrt_map_destroy(asyncrt_map *map); /* NULL is fine */

/* The path the map runs, never ASYNCRT_PATH_AUTO. */
ASYNCRT_EXTERN asyncrt_op_path asyncrt_map_path_of(const asyncrt_map *map);
/* The compiled program (its PTX or CUBIN), owned by the map. */
ASYNCRT_EXTERN const asyncrt_program *asyncrt_map_program(const asyncrt_map *map);
/* The generated CUDA source, owned by the map. */
ASYNCRT_EXTERN const char *asyncrt_map_source(const asyncrt_map *map);
/* Elements per tile of the body (the unit a CTA moves per stage), for tests
 * that aim at tile boundaries. */
ASYNCRT_EXTERN size_t asyncrt_map_tile_elements(const asyncrt_map *map);

/* Runs the map over n elements on `stream`. inputs[k] and outputs[k] are
 * device pointers, each aligned to its dtype's size; outputs must not overlap
 * inputs unless equal element for element (in place). scalars[k] points at a
 * value of scalar k's dtype (uint16_t bits for f16/bf16); it may be NULL when
 * there are no scalars. n == 0 launches nothing. */
ASYNCRT_EXTERN asyncrt_status asyncrt_map_launch(asyncrt_map *map, size_t n, const asyncrt_deviceptr *inputs,
                                  const asyncrt_deviceptr *outputs, const void *const *scalars,
                                  asyncrt_stream stream);

#ifdef __cplusplus
}
#endif
#endif
