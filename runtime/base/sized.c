/* Reading and writing a caller's struct by its size (sized.h). */
#include "sized.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "asyncrt/cache.h"
#include "asyncrt/bundle.h"
#include "asyncrt/ops.h"
#include "asyncrt/runtime.h"
#include "asyncrt/tensormap.h"
#include "asyncrt/tile_ops.h"

#define SIZED_MAX ((size_t)64 << 10)

/* Each struct's first layout: the fields above its header's "The first
 * layout ends here" line, or all of them where there is none. A caller's
 * size below it is refused: that is not a struct any header declared. */
static const struct {
    const char *name;
    size_t first, full;
} k_sized[] = {
    [ASYNCRT_SIZED_COMPILE_OPTIONS] = {"asyncrt_compile_options", offsetof(asyncrt_compile_options, no_std_headers),
                                       sizeof(asyncrt_compile_options)},
    [ASYNCRT_SIZED_LAUNCH_CONFIG] = {"asyncrt_launch_config", offsetof(asyncrt_launch_config, cooperative),
                                     sizeof(asyncrt_launch_config)},
    [ASYNCRT_SIZED_MAP_DESC] = {"asyncrt_map_desc", sizeof(asyncrt_map_desc), sizeof(asyncrt_map_desc)},
    [ASYNCRT_SIZED_TILE_DESC] = {"asyncrt_tile_desc", sizeof(asyncrt_tile_desc), sizeof(asyncrt_tile_desc)},
    [ASYNCRT_SIZED_TENSORMAP_CHECK_OPTIONS] = {"asyncrt_tensormap_check_options",
                                               sizeof(asyncrt_tensormap_check_options),
                                               sizeof(asyncrt_tensormap_check_options)},
    [ASYNCRT_SIZED_CACHE_STATS] = {"asyncrt_cache_stats", offsetof(asyncrt_cache_stats, evictions),
                                   sizeof(asyncrt_cache_stats)},
    [ASYNCRT_SIZED_REMOTE_CACHE_STATS] = {"asyncrt_remote_cache_stats", sizeof(asyncrt_remote_cache_stats),
                                          sizeof(asyncrt_remote_cache_stats)},
    [ASYNCRT_SIZED_DEVICE_INFO] = {"asyncrt_device_info", sizeof(asyncrt_device_info), sizeof(asyncrt_device_info)},
    [ASYNCRT_SIZED_KERNEL_RESOURCES] = {"asyncrt_kernel_resources", sizeof(asyncrt_kernel_resources),
                                        sizeof(asyncrt_kernel_resources)},
    [ASYNCRT_SIZED_TENSORMAP_REPORT] = {"asyncrt_tensormap_report", sizeof(asyncrt_tensormap_report),
                                        sizeof(asyncrt_tensormap_report)},
    [ASYNCRT_SIZED_CACHE_INFO] = {"asyncrt_cache_info", sizeof(asyncrt_cache_info), sizeof(asyncrt_cache_info)},
    [ASYNCRT_SIZED_CACHE_DIR_OPTIONS] = {"asyncrt_cache_dir_options", sizeof(asyncrt_cache_dir_options),
                                         sizeof(asyncrt_cache_dir_options)},
    [ASYNCRT_SIZED_CACHE_DIR_FILE] = {"asyncrt_cache_dir_file", sizeof(asyncrt_cache_dir_file),
                                      sizeof(asyncrt_cache_dir_file)},
    [ASYNCRT_SIZED_CACHE_DIR_TOTALS] = {"asyncrt_cache_dir_totals", sizeof(asyncrt_cache_dir_totals),
                                        sizeof(asyncrt_cache_dir_totals)},
    [ASYNCRT_SIZED_CACHE_DIR_ITEM] = {"asyncrt_cache_dir_item", sizeof(asyncrt_cache_dir_item),
                                      sizeof(asyncrt_cache_dir_item)},
    [ASYNCRT_SIZED_CACHE_DIR_PRUNE_RESULT] = {"asyncrt_cache_dir_prune_result", sizeof(asyncrt_cache_dir_prune_result),
                                              sizeof(asyncrt_cache_dir_prune_result)},
    [ASYNCRT_SIZED_CACHE_DIR_PULL_RESULT] = {"asyncrt_cache_dir_pull_result",
                                             offsetof(asyncrt_cache_dir_pull_result, already_here),
                                             sizeof(asyncrt_cache_dir_pull_result)},
    [ASYNCRT_SIZED_ARCH] = {"asyncrt_arch", sizeof(asyncrt_arch), sizeof(asyncrt_arch)},
    [ASYNCRT_SIZED_NVRTC_INFO] = {"asyncrt_nvrtc_info", sizeof(asyncrt_nvrtc_info), sizeof(asyncrt_nvrtc_info)},
    [ASYNCRT_SIZED_NVRTC_CANDIDATE] = {"asyncrt_nvrtc_candidate", sizeof(asyncrt_nvrtc_candidate),
                                       sizeof(asyncrt_nvrtc_candidate)},
    [ASYNCRT_SIZED_CALIBRATE_OPTIONS] = {"asyncrt_calibrate_options", sizeof(asyncrt_calibrate_options),
                                         sizeof(asyncrt_calibrate_options)},
    [ASYNCRT_SIZED_BUNDLE_MAKE_OPTIONS] = {"asyncrt_bundle_make_options", offsetof(asyncrt_bundle_make_options, progress),
                                           sizeof(asyncrt_bundle_make_options)},
    [ASYNCRT_SIZED_PROGRAM_IMAGE_INFO] = {"asyncrt_program_image_info", sizeof(asyncrt_program_image_info),
                                          sizeof(asyncrt_program_image_info)},
    [ASYNCRT_SIZED_CACHE_EXPLANATION] = {"asyncrt_cache_explanation", sizeof(asyncrt_cache_explanation),
                                         sizeof(asyncrt_cache_explanation)},
};
_Static_assert(sizeof k_sized / sizeof k_sized[0] == ASYNCRT_SIZED_COUNT, "one row per sized struct");

size_t asyncrt__sized_first(asyncrt_sized type) { return k_sized[type].first; }

/* "asyncrt_compile_options" -> "ASYNCRT_COMPILE_OPTIONS_INIT" */
static void init_macro(const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (; name[n] && n + 6 < size; n++) out[n] = (char)toupper((unsigned char)name[n]);
    snprintf(out + n, size - n, "_INIT");
}

static bool size_ok(asyncrt_sized type, size_t size, char *why)
{
    if (size >= k_sized[type].first && size <= SIZED_MAX) return true;
    char init[64];
    init_macro(k_sized[type].name, init, sizeof init);
    snprintf(why, ASYNCRT_SIZED_WHY,
             "%s.size is %zu: it must be at least %zu, the struct's first layout, and at most %zu (set it "
             "with %s, or .size = sizeof(%s); the library uses only the fields a caller's size covers: "
             "docs/deployment.md, \"ABI and versioning\")",
             k_sized[type].name, size, k_sized[type].first, SIZED_MAX, init, k_sized[type].name);
    return false;
}

bool asyncrt__sized_in(asyncrt_sized type, const void *caller, void *full, char why[ASYNCRT_SIZED_WHY])
{
    size_t size, known = k_sized[type].full;
    memcpy(&size, caller, sizeof size);
    if (!size_ok(type, size, why)) return false;
    const unsigned char *bytes = caller;
    for (size_t at = known; at < size; at++)
        if (bytes[at]) {
            snprintf(why, ASYNCRT_SIZED_WHY,
                     "%s.size is %zu but this libasyncrt %s knows %zu bytes of it, and byte %zu is set: the "
                     "program was built against a newer asyncrt and uses a field this one does not have "
                     "(run it with the libasyncrt it was built against, or newer)",
                     k_sized[type].name, size, asyncrt_version_string(), known, at);
            return false;
        }
    size_t n = size < known ? size : known;
    memcpy(full, caller, n);
    memset((unsigned char *)full + n, 0, known - n);
    memcpy(full, &known, sizeof known);
    return true;
}

bool asyncrt__sized_out(asyncrt_sized type, void *caller, const void *full, char why[ASYNCRT_SIZED_WHY])
{
    size_t size, known = k_sized[type].full;
    memcpy(&size, caller, sizeof size);
    if (!size_ok(type, size, why)) return false;
    size_t n = size < known ? size : known, skip = sizeof size; /* the caller's size stays */
    memcpy((unsigned char *)caller + skip, (const unsigned char *)full + skip, n - skip);
    memset((unsigned char *)caller + n, 0, size - n);
    return true;
}
