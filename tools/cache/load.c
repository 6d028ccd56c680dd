/* The library's cache calls as the commands use them: a file checked, the
 * folder listed, the door handed to the tool's context, another folder
 * opened. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

bool cache_check(cache_tool *tool, asyncrt_cache_dir *folder, const char *name, asyncrt_cache_dir_item *item,
                 char *why, size_t size)
{
    *item = (asyncrt_cache_dir_item)ASYNCRT_CACHE_DIR_ITEM_INIT;
    if (asyncrt_cache_dir_check(folder, name, item) == ASYNCRT_SUCCESS) return true;
    snprintf(why, size, "%s", asyncrt_context_last_error(tool->ctx));
    return false;
}

bool cache_list(asyncrt_cache_dir *folder, cache_files *out)
{
    *out = (cache_files){.totals = ASYNCRT_CACHE_DIR_TOTALS_INIT};
    if (asyncrt_cache_dir_scan(folder, &out->listing) != ASYNCRT_SUCCESS) return false;
    size_t n = asyncrt_cache_dir_listing_count(out->listing);
    bool ok = (out->files = calloc(n ? n : 1, sizeof *out->files)) != NULL &&
              asyncrt_cache_dir_listing_totals(out->listing, &out->totals) == ASYNCRT_SUCCESS;
    for (size_t i = 0; ok && i < n; i++) {
        out->files[i] = (asyncrt_cache_dir_file)ASYNCRT_CACHE_DIR_FILE_INIT;
        ok = asyncrt_cache_dir_listing_file(out->listing, i, &out->files[i]) == ASYNCRT_SUCCESS;
    }
    out->count = ok ? n : 0;
    if (!ok) cache_files_free(out);
    return ok;
}

void cache_files_free(cache_files *f)
{
    free(f->files);
    asyncrt_cache_dir_listing_free(f->listing);
    f->files = NULL, f->listing = NULL, f->count = 0;
}

bool cache_use_door(cache_tool *tool, const char *cmd)
{
    if (asyncrt_context_use_cache_dir(tool->ctx, tool->cache) == ASYNCRT_SUCCESS) return true;
    cache_fail(tool, cmd, TOOL_EXIT_INTERNAL, "%s", asyncrt_context_last_error(tool->ctx));
    return false;
}

asyncrt_cache_dir *tool_open_folder(cache_tool *tool, const char *path, bool create, char *why, size_t size)
{
    asyncrt_cache_dir_options o = ASYNCRT_CACHE_DIR_OPTIONS_INIT;
    o.dir = path;
    o.role = ASYNCRT_CACHE_DIR_EXPORT;
    o.create = create;
    asyncrt_cache_dir *folder = NULL;
    if (asyncrt_cache_dir_open(tool->ctx, &o, &folder) != ASYNCRT_SUCCESS)
        snprintf(why, size, "%s", asyncrt_context_last_error(tool->ctx));
    return folder;
}
