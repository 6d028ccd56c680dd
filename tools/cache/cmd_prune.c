/* prune: evict least recently used files down to a size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_prune;
    uint64_t max = 0;
    bool have_max = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) {
            if (!asyncrt_cache_parse_size(argv[++i], &max))
                return cache_usage_error(&cmd_prune, "--max-bytes \"%s\" is not a size (e.g. 500000000, 512M, 2G)",
                                        argv[i]);
            have_max = true;
        } else {
            return cache_usage_error(&cmd_prune, "unknown option or missing value \"%s\"", argv[i]);
        }
    }
    if (!have_max) return cache_usage_error(&cmd_prune, "--max-bytes N is required");
    asyncrt_cache_dir_prune_result r = ASYNCRT_CACHE_DIR_PRUNE_RESULT_INIT;
    asyncrt_status status = asyncrt_cache_dir_prune(tool->cache, max, &r);
    if (r.refused_below) {
        char need[32];
        tool_format_bytes(r.refused_below, need, sizeof need);
        fprintf(stderr, "asyncrt-cache prune: warning: --max-bytes %llu is smaller than the newest entry with its "
                        "manifest (%s): refused, nothing evicted (asyncrt-cache clear empties the cache)\n",
                (unsigned long long)max, need);
        return TOOL_EXIT_USAGE;
    }
    if (status != ASYNCRT_SUCCESS)
        return cache_fail(tool, "prune", TOOL_EXIT_IO, "%s", asyncrt_context_last_error(tool->ctx));
    cache_files cf;
    uint64_t left = 0;
    if (cache_list(tool->cache, &cf)) {
        left = cf.totals.entry_bytes + cf.totals.manifest_bytes;
        cache_files_free(&cf);
    }
    char size[32];
    tool_format_bytes(left, size, sizeof size);
    if (tool->json) {
        printf("{");
        cache_json_key("evicted", true);
        printf("%zu", r.evicted);
        cache_json_key("temporaries_removed", false);
        printf("%zu", r.temps_removed);
        cache_json_key("bytes_left", false);
        printf("%llu\n}\n", (unsigned long long)left);
    } else {
        printf("evicted %zu files, removed %zu stale temporaries; %s left\n", r.evicted, r.temps_removed, size);
    }
    return left <= max ? TOOL_EXIT_OK : TOOL_EXIT_IO;
}

const cache_command cmd_prune = {
    "prune", "evict least recently used files down to --max-bytes N",
    "usage: asyncrt-cache [--dir DIR] prune --max-bytes N\n"
    "\n"
    "Deletes the least recently used entries, each with the manifest that names it,\n"
    "until they take at most N bytes (N may end in K, M or G: binary units), and\n"
    "temporaries left by processes that died. The newest entry is always kept: an N\n"
    "smaller than it (with its manifest) is refused with a warning and nothing is\n"
    "evicted. Safe while other processes use the cache: one reading a file that is\n"
    "deleted keeps reading it. Exit codes: 0 success, 2 bad usage or a refused N, 7\n"
    "no usable cache directory, or still above N (files that could not be deleted).\n",
    true, run};
