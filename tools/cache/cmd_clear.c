/* clear: delete every entry, manifest, temporary and key record. */
#include <stdlib.h>

#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_clear;
    if (argc > 1) return cache_usage_error(&cmd_clear, "unexpected argument \"%s\"", argv[1]);
    size_t removed = 0;
    if (asyncrt_cache_dir_clear(tool->cache, &removed) != ASYNCRT_SUCCESS)
        return cache_fail(tool, "clear", TOOL_EXIT_IO, "%s", asyncrt_context_last_error(tool->ctx));
    cache_files cf;
    size_t left = 0;
    if (cache_list(tool->cache, &cf)) {
        left = cf.totals.entries + cf.totals.manifests + cf.totals.temps;
        cache_files_free(&cf);
    }
    if (tool->json) {
        printf("{");
        cache_json_key("removed", true);
        printf("%zu", removed);
        cache_json_key("left", false);
        printf("%zu\n}\n", left);
    } else {
        printf("removed %zu files%s\n", removed, left ? "; some could not be deleted" : "");
    }
    return left ? TOOL_EXIT_IO : TOOL_EXIT_OK;
}

const cache_command cmd_clear = {
    "clear", "delete every entry, manifest, temporary and key record",
    "usage: asyncrt-cache [--dir DIR] clear\n"
    "\n"
    "Deletes every entry, manifest and temporary file, and the key records that\n"
    "explain keeps beside them (a shared cache's KEY and the records' lock stay).\n"
    "Exit codes: 0 success, 2 bad usage, 7 no usable cache directory, or some files\n"
    "could not be deleted.\n",
    true, run};
