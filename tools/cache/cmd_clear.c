/* clear: delete every entry, manifest and temporary. */
#include "cache_store.h"
#include "tool.h"

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_clear;
    if (argc > 1) return tool_usage_error(&cmd_clear, "unexpected argument \"%s\"", argv[1]);
    size_t removed = asyncrt__cache_remove_all(tool->dir);
    asyncrt_cache_listing l;
    size_t left = 0;
    if (asyncrt__cache_scan(tool->dir, &l)) {
        left = l.entries + l.manifests + l.temps;
        asyncrt__cache_listing_free(&l);
    }
    printf("removed %zu files%s\n", removed, left ? "; some could not be deleted" : "");
    return left ? TOOL_PROBLEM : TOOL_OK;
}

const cache_command cmd_clear = {
    "clear", "delete every entry, manifest and temporary",
    "usage: asyncrt-cache [--dir DIR] clear\n"
    "\n"
    "Deletes every entry, manifest and temporary file (a shared cache's KEY stays).\n"
    "Exit codes: 0 success, 1 some files could not be deleted, 2 bad usage, 3 no\n"
    "usable cache directory.\n",
    true, run};
