/* prune: evict least recently used files down to a size. */
#include <string.h>

#include "cache.h"
#include "cache_store.h"
#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_prune;
    uint64_t max = 0;
    bool have_max = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) {
            if (!asyncrt__cache_parse_size(argv[++i], &max))
                return cache_usage_error(&cmd_prune, "--max-bytes \"%s\" is not a size (e.g. 500000000, 512M, 2G)",
                                        argv[i]);
            have_max = true;
        } else {
            return cache_usage_error(&cmd_prune, "unknown option or missing value \"%s\"", argv[i]);
        }
    }
    if (!have_max) return cache_usage_error(&cmd_prune, "--max-bytes N is required");
    size_t temps = 0;
    size_t evicted = asyncrt__cache_evict(tool->dir, max, NULL, &temps);
    asyncrt_cache_listing l;
    uint64_t left = 0;
    if (asyncrt__cache_scan(tool->dir, &l)) {
        left = l.entry_bytes + l.manifest_bytes;
        asyncrt__cache_listing_free(&l);
    }
    char size[32];
    tool_format_bytes(left, size, sizeof size);
    if (tool->json) {
        printf("{");
        cache_json_key("evicted", true);
        printf("%zu", evicted);
        cache_json_key("temporaries_removed", false);
        printf("%zu", temps);
        cache_json_key("bytes_left", false);
        printf("%llu\n}\n", (unsigned long long)left);
    } else {
        printf("evicted %zu files, removed %zu stale temporaries; %s left\n", evicted, temps, size);
    }
    return left <= max ? TOOL_EXIT_OK : TOOL_EXIT_IO;
}

const cache_command cmd_prune = {
    "prune", "evict least recently used files down to --max-bytes N",
    "usage: asyncrt-cache [--dir DIR] prune --max-bytes N\n"
    "\n"
    "Deletes the least recently used entries and manifests until they take at most\n"
    "N bytes (N may end in K, M or G: binary units), and temporaries left by\n"
    "processes that died. Safe while other processes use the cache: one reading a\n"
    "file that is deleted keeps reading it. Exit codes: 0 success, 2 bad usage, 7 no\n"
    "usable cache directory, or still above N (files that could not be deleted).\n",
    true, run};
