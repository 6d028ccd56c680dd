/* list: every file with its kind, size and age, most recently used first,
 * and what each entry was compiled from (its stored description). */
#include <stdlib.h>
#include <string.h>

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

static size_t files_read(const asyncrt_manifest *m)
{
    size_t n = 0;
    for (size_t s = 0; s < m->count; s++) n += m->sets[s].count;
    return n;
}

/* The line under an entry or manifest: what it is for, or why it cannot be read. */
static void describe_text(const cache_loaded *x, bool ok, const char *why)
{
    const asyncrt_program *p = x->program;
    if (!ok) {
        printf("%34s(cannot be read: %s)\n", "", why);
    } else if (x->is_manifest) {
        char hex[65];
        printf("%34s%zu dependency set%s, %zu files read", "", x->manifest.count, x->manifest.count == 1 ? "" : "s",
               files_read(&x->manifest));
        if (x->manifest.count) asyncrt__sha256_hex(x->manifest.sets[0].result_key, hex);
        printf(x->manifest.count ? "; the newest is entry %.16s...\n" : "\n", hex);
    } else {
        printf("%34s%s for %s (%s)", "", p->source_name ? p->source_name : "(source not recorded)", p->arch,
               p->ptx ? "PTX" : "CUBIN");
        for (size_t i = 0; i < p->name_count; i++) printf("%s%s", i ? ", " : "; names ", p->expressions[i]);
        if (p->options) printf("; options %s", *p->options ? p->options : "(none)");
        printf("\n");
    }
}

static void describe_json(const cache_loaded *x, bool ok, const char *why)
{
    const asyncrt_program *p = x->program;
    if (!ok) {
        printf(", \"error\": ");
        tool_json_string(stdout, why);
    } else if (x->is_manifest) {
        printf(", \"dependency_sets\": %zu, \"files_read\": %zu, \"newest_entry\": ", x->manifest.count,
               files_read(&x->manifest));
        char hex[65];
        if (x->manifest.count) asyncrt__sha256_hex(x->manifest.sets[0].result_key, hex);
        if (x->manifest.count) printf("\"%s.bin\"", hex);
        else printf("null");
    } else {
        printf(", \"source\": ");
        if (p->source_name) tool_json_string(stdout, p->source_name);
        else printf("null");
        printf(", \"arch\": ");
        tool_json_string(stdout, p->arch);
        printf(", \"ptx\": %s, \"names\": [", p->ptx ? "true" : "false");
        for (size_t i = 0; i < p->name_count; i++) {
            printf("%s", i ? ", " : "");
            tool_json_string(stdout, p->expressions[i]);
        }
        printf("], \"options\": ");
        if (p->options) tool_json_string(stdout, p->options);
        else printf("null");
    }
}

static int run(cache_tool *tool, int argc, char **argv)
{
    extern const cache_command cmd_list;
    if (argc > 1) return cache_usage_error(&cmd_list, "unexpected argument \"%s\"", argv[1]);
    asyncrt_cache_listing l;
    if (!asyncrt__cache_scan_at(tool->dir_fd, &l))
        return cache_fail(tool, "list", TOOL_EXIT_IO, "cannot read %s", tool->dir);
    if (l.count) qsort(l.files, l.count, sizeof *l.files, newest_first);
    if (tool->json) {
        printf("{");
        cache_json_key("directory", true);
        tool_json_string(stdout, tool->dir);
        cache_json_key("files", false);
        printf("[");
    } else {
        printf("%-8s %12s %10s  %s\n", "kind", "size", "used", "name, then what it is for");
    }
    const uint8_t *mac = tool->shared ? tool->mac_key : NULL;
    for (size_t i = 0; i < l.count; i++) {
        const asyncrt_cache_file *f = &l.files[i];
        bool described = f->regular && (f->kind == ASYNCRT_CACHE_ENTRY || f->kind == ASYNCRT_CACHE_MANIFEST);
        cache_loaded x = {0};
        char why[256] = "";
        bool ok = described && cache_load(tool->dir_fd, f, mac, &x, why, sizeof why);
        double age = tool_age_seconds(&f->mtime);
        if (tool->json) {
            printf("%s\n    {\"kind\": \"%s\", \"name\": ", i ? "," : "", kind_name(f));
            tool_json_string(stdout, f->name);
            printf(", \"size\": %llu, \"used_s_ago\": %.0f", (unsigned long long)f->size, age < 0 ? 0 : age);
            if (described) describe_json(&x, ok, why);
            printf("}");
        } else {
            char size[32], ago[32];
            tool_format_bytes(f->size, size, sizeof size);
            tool_format_age(age, ago, sizeof ago);
            printf("%-8s %12s %6s ago  %s\n", kind_name(f), size, ago, f->name);
            if (described) describe_text(&x, ok, why);
        }
        cache_loaded_free(&x);
    }
    if (tool->json) {
        printf("%s]", l.count ? "\n  " : "");
        cache_json_key("entries", false);
        printf("%zu", l.entries);
        cache_json_key("manifests", false);
        printf("%zu", l.manifests);
        cache_json_key("bytes", false);
        printf("%llu\n}\n", (unsigned long long)(l.entry_bytes + l.manifest_bytes));
    } else {
        char total[32];
        tool_format_bytes(l.entry_bytes + l.manifest_bytes, total, sizeof total);
        printf("%zu entries, %zu manifests, %s\n", l.entries, l.manifests, total);
    }
    asyncrt__cache_listing_free(&l);
    return TOOL_EXIT_OK;
}

const cache_command cmd_list = {
    "list", "every file with its kind, size, last use and what it was compiled from",
    "usage: asyncrt-cache [--dir DIR] list\n"
    "\n"
    "One line per file, most recently used first: kind (entry, manifest, temp,\n"
    "other, odd = not a regular file), size, time since last use (a hit refreshes\n"
    "it; eviction removes the least recently used first), name. Under each entry,\n"
    "what it was compiled from, as stored in it: the source name, target, name\n"
    "expressions and NVRTC options (but -arch and the toolkit's -I); entries\n"
    "written before asyncrt recorded them say \"source not recorded\". Under each\n"
    "manifest, its dependency sets. A file the library would refuse says why.\n"
    "Exit codes: 0 success, 2 bad usage, 7 no usable cache directory.\n",
    false, run};
