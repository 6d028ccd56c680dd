/* The public structs that grow (docs/deployment.md, "ABI and versioning"): each starts
 * with `size_t size`, sizeof the struct as its caller was built. The
 * library reads and writes a caller's struct only here, and only the bytes
 * that size covers, so a program built against an older header (a smaller
 * struct) keeps working when fields are appended.
 *
 * The rule, for a caller's size N and this library's sizeof S:
 *   N below the struct's first layout (0 included), or above 64 KiB (no
 *     struct is that big: the size was never set): refused;
 *   N <= S: the N bytes are the caller's, the rest of the library's copy is
 *     zero (in), or the library writes only N bytes (out);
 *   N > S (a program built against a newer header): in, accepted only when
 *     the bytes this library does not know are all zero (the program does
 *     not use what it cannot have); out, those bytes are zeroed.
 * The size member itself is never written back. */
#ifndef ASYNCRT_SIZED_H
#define ASYNCRT_SIZED_H

#include <stdbool.h>
#include <stddef.h>

typedef enum asyncrt_sized {
    ASYNCRT_SIZED_COMPILE_OPTIONS,         /* in: asyncrt_compile_options */
    ASYNCRT_SIZED_LAUNCH_CONFIG,           /* in: asyncrt_launch_config */
    ASYNCRT_SIZED_MAP_DESC,                /* in: asyncrt_map_desc */
    ASYNCRT_SIZED_TILE_DESC,               /* in: asyncrt_tile_desc */
    ASYNCRT_SIZED_TENSORMAP_CHECK_OPTIONS, /* in: asyncrt_tensormap_check_options */
    ASYNCRT_SIZED_CACHE_STATS,             /* out: asyncrt_cache_stats */
    ASYNCRT_SIZED_REMOTE_CACHE_STATS,      /* out: asyncrt_remote_cache_stats */
    ASYNCRT_SIZED_DEVICE_INFO,             /* out: asyncrt_device_info */
    ASYNCRT_SIZED_KERNEL_RESOURCES,        /* out: asyncrt_kernel_resources */
    ASYNCRT_SIZED_TENSORMAP_REPORT,        /* out: asyncrt_tensormap_report */
    ASYNCRT_SIZED_CACHE_INFO,              /* out: asyncrt_cache_info */
    ASYNCRT_SIZED_CACHE_DIR_OPTIONS,       /* in: asyncrt_cache_dir_options */
    ASYNCRT_SIZED_CACHE_DIR_FILE,          /* out: asyncrt_cache_dir_file */
    ASYNCRT_SIZED_CACHE_DIR_TOTALS,        /* out: asyncrt_cache_dir_totals */
    ASYNCRT_SIZED_CACHE_DIR_ITEM,          /* out: asyncrt_cache_dir_item */
    ASYNCRT_SIZED_CACHE_DIR_PRUNE_RESULT,  /* out: asyncrt_cache_dir_prune_result */
    ASYNCRT_SIZED_CACHE_DIR_PULL_RESULT,   /* out: asyncrt_cache_dir_pull_result */
    ASYNCRT_SIZED_ARCH,                    /* in and out: asyncrt_arch */
    ASYNCRT_SIZED_NVRTC_INFO,              /* out: asyncrt_nvrtc_info */
    ASYNCRT_SIZED_NVRTC_CANDIDATE,         /* out: asyncrt_nvrtc_candidate */
    ASYNCRT_SIZED_CALIBRATE_OPTIONS,       /* in: asyncrt_calibrate_options */
    ASYNCRT_SIZED_BUNDLE_MAKE_OPTIONS,     /* in: asyncrt_bundle_make_options */
    ASYNCRT_SIZED_PROGRAM_IMAGE_INFO,      /* out: asyncrt_program_image_info */
    ASYNCRT_SIZED_CACHE_EXPLANATION,       /* out: asyncrt_cache_explanation */
    ASYNCRT_SIZED_COUNT
} asyncrt_sized;

/* Room for why a size was refused (the struct, the size, the rule, the fix). */
#define ASYNCRT_SIZED_WHY 400

/* In: copies the caller's struct of type `type` into `full`, a whole
 * struct of this library's layout (full->size becomes sizeof it). Out:
 * copies `full` into the caller's struct. False, with why, for a size the
 * rule above refuses (nothing is written then). */
bool asyncrt__sized_in(asyncrt_sized type, const void *caller, void *full, char why[ASYNCRT_SIZED_WHY]);
bool asyncrt__sized_out(asyncrt_sized type, void *caller, const void *full, char why[ASYNCRT_SIZED_WHY]);

/* The smallest size accepted for `type` (its first layout), for tests. */
size_t asyncrt__sized_first(asyncrt_sized type);

#endif
