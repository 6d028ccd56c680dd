/* list: every file with its kind, size and age, most recently used first. */
#include <stdlib.h>
#include <string.h>

#include "cache_store.h"
#include "tool.h"

static int newest_first(const void *a, const void *b)
{
    const asyncrt_cache_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const char *kind_name(const asyncrt_cache_file *f)
{
    if (!f->regular) return "odd";
    switch (f->kind) {
    case ASYNCRT_CACHE_ENTRY: return "entry";
    case ASYNCRT_CACHE_MANIFEST: return "manifest";
    case ASYNCRT_CACHE_TEMP: return "temp";
    default: return "other";
    }
}

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_list;
    if (argc > 1) return tool_usage_error(&cmd_list, "unexpected argument \"%s\"", argv[1]);
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan(tool->dir, &l)) {
        fprintf(stderr, "asyncrt-cache list: cannot read %s\n", tool->dir);
        return TOOL_NO_CACHE;
    }
    if (l.count) qsort(l.files, l.count, sizeof *l.files, newest_first);
    printf("%-8s %12s %10s  %s\n", "kind", "size", "used", "name");
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        char size[32], age[32];
        tool_format_bytes(f->size, size, sizeof size);
        tool_format_age(tool_age_seconds(&f->mtime), age, sizeof age);
        printf("%-8s %12s %6s ago  %s\n", kind_name(f), size, age, f->name);
    }
    char total[32];
    tool_format_bytes(l.entry_bytes + l.manifest_bytes, total, sizeof total);
    printf("%zu entries, %zu manifests, %s\n", l.entries, l.manifests, total);
    asyncrt__cache_listing_free(&l);
    return TOOL_OK;
}

const cache_command cmd_list = {
    "list", "every file with its kind, size and when it was last used",
    "usage: asyncrt-cache [--dir DIR] list\n"
    "\n"
    "One line per file, most recently used first: kind (entry, manifest, temp,\n"
    "other, odd = not a regular file), size, time since last use (a hit refreshes\n"
    "it; eviction removes the least recently used first), name. Exit codes: 0\n"
    "success, 2 bad usage, 3 no usable cache directory.\n",
    false, run};
