/* clear: delete every entry, manifest and temporary. */
#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_clear;
    if (argc > 1) return cache_usage_error(&cmd_clear, "unexpected argument \"%s\"", argv[1]);
    size_t removed = asyncrt__cache_remove_all_at(tool->dir_fd);
    asyncrt_cache_listing l;
    size_t left = 0;
    if (asyncrt__cache_scan_at(tool->dir_fd, &l)) {
        left = l.entries + l.manifests + l.temps;
        asyncrt__cache_listing_free(&l);
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
    "clear", "delete every entry, manifest and temporary",
    "usage: asyncrt-cache [--dir DIR] clear\n"
    "\n"
    "Deletes every entry, manifest and temporary file (a shared cache's KEY stays).\n"
    "Exit codes: 0 success, 2 bad usage, 7 no usable cache directory, or some files\n"
    "could not be deleted.\n",
    true, run};
